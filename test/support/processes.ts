import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { startNodeProcess } from '../../test-kit/node-process.mjs';
import { eventually } from './poll.js';
import { connectError } from './raw-http.js';

/** The processes of `pids` still running (a zombie counts as gone). */
export function alive(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    return !/\) Z /.test(readProcStat(pid));
  });
}

function readProcStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return ') Z ';
  }
}

/**
 * An idle Node process whose command line ends with `word` (`postgres` makes it a postmaster's
 * stand-in), once it has run `setUp` (a statement: a signal handler, say).
 */
export async function processNaming(
  word: string,
  setUp = '',
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `${setUp}; process.stdout.write('ready'); setInterval(() => {}, 1000)`,
      word,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  await once(child.stdout!, 'data');
  return child;
}

/**
 * A Node process that has started one of its own, both idle until killed: a stand-in for a
 * postmaster and its backend. Kill the child first (`child`), then `parent`.
 */
export async function parentWithChild(): Promise<{
  parent: ChildProcess;
  child: number;
}> {
  const parent = spawn(
    process.execPath,
    [
      '-e',
      `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
       process.stdout.write(c.pid + "\\n"); setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
  return { parent, child: Number(line.toString().trim()) };
}

/** Whether anything accepts connections on the port. */
export async function portIsOpen(port: number): Promise<boolean> {
  return (await connectError(port)) === undefined;
}

/**
 * A test runner's stand-in: a Node process that starts a store from `entry` (plant-store's
 * testing entry), prints its URL and stays alive until killed, as a runner does.
 */
export async function storeStartedByAnotherProcess(
  entry: string,
  {
    options = {},
    env,
  }: { options?: object; env: Record<string, string | undefined> },
): Promise<{ parent: ReturnType<typeof startNodeProcess>; url: string }> {
  const script = [
    `const { startPlantStore } = await import(${JSON.stringify(entry)});`,
    `const store = await startPlantStore(${JSON.stringify(options)});`,
    'console.log(JSON.stringify({ url: store.url }));',
    'setInterval(() => {}, 1000);',
  ].join('\n');
  let output = '';
  const parent = startNodeProcess({
    args: ['--input-type=module', '-e', script],
    env,
    onOutput: (text: string) => (output += text),
  });
  const line = await eventually(
    'the parent printing the started store',
    () => (/\{"url":"[^"]+"\}/.exec(output) ?? undefined)?.[0],
    { timeoutMs: 60_000 },
  ).catch((error: unknown) => {
    // What the parent and the service said: the only trace of a start that hung.
    throw new Error(`${String(error)}; its output:\n${output.slice(-4_000)}`);
  });
  return { parent, url: (JSON.parse(line) as { url: string }).url };
}

/** The processes below `pid` now, from the kernel's list of each one's children. */
export function descendantsOf(pid: number): Set<number> {
  const found = new Set<number>();
  const visit = (parent: number): void => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return; // Ended meanwhile.
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(
          `/proc/${parent}/task/${task}/children`,
          'utf8',
        );
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        if (found.has(child)) continue;
        found.add(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/**
 * For the test it is called in (undone by vi.restoreAllMocks()): process.kill signals only
 * processes below this one, as descendantsOf finds them, not as the code under test does.
 * The test kit picks whom to stop, continue or kill from /proc: under a mutant of that
 * reading (Stryker's), a signal to another process is refused, and the test fails, rather
 * than stopping or killing another program of the machine (a run's own Stryker was stopped).
 */
export function signalsOnlyBelowThisProcess(): void {
  const kill = process.kill.bind(process);
  vi.spyOn(process, 'kill').mockImplementation((pid, signal) => {
    if (signal !== 0 && !descendantsOf(process.pid).has(pid))
      throw Object.assign(
        new Error(
          `kill(${pid}, ${String(signal)}): not a process of this test`,
        ),
        { code: 'EPERM' },
      );
    return kill(pid, signal);
  });
}
