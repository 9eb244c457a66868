import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../../../test/support/poll.js';
import { processNaming } from '../../../test/support/processes.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import {
  OWNER_FILE,
  recordPostmasterOwner,
  stopStalePostmaster,
} from './stale-postmaster.js';

const isRunning = (child: ChildProcess) =>
  child.exitCode === null && child.signalCode === null;

/** The pid of a process that has exited. */
async function endedPid(): Promise<number> {
  const child = await processNaming('gone');
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
  return child.pid!;
}

describe('stopStalePostmaster: a postmaster whose starter is gone is stopped, any other left alone', () => {
  const folder = useTempFolder('stale-postmaster-');
  const children: ChildProcess[] = [];
  const postmaster = async (word = 'postgres') => {
    const child = await processNaming(word);
    children.push(child);
    await writeFile(
      join(folder(), 'postmaster.pid'),
      `${child.pid}\n/data\n1700000000\n5432\n`,
    );
    return child;
  };
  const owner = (pid: number) =>
    writeFile(join(folder(), OWNER_FILE), `${pid}\n`);
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  // A pid of 0 is pidOf's to refuse (pid-files.spec.ts): under a mutant that let it through, a
  // test here would send SIGINT to process 0, this whole process group, Stryker's with it.
  it('finds nothing stale without a postmaster.pid, with an unreadable one, or one naming an ended process', async () => {
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    await writeFile(join(folder(), 'postmaster.pid'), 'not a pid\n');
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    await writeFile(join(folder(), 'postmaster.pid'), `${await endedPid()}\n`);
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
  });

  it('leaves alone a process that took over the number and is no postgres', async () => {
    const other = await postmaster('something-else');
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    expect(isRunning(other)).toBe(true);
  });

  it('leaves alone a postmaster whose recorded owner still runs (this very process, say)', async () => {
    const running = await postmaster();
    await recordPostmasterOwner(folder());
    expect(await readFile(join(folder(), OWNER_FILE), 'utf8')).toBe(
      `${process.pid}\n`,
    );
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    expect(isRunning(running)).toBe(true);
  });

  it('stops one whose owner is gone, waits for it to exit, and says so', async () => {
    const stale = await postmaster();
    const gone = await endedPid();
    await owner(gone);
    const exited = once(stale, 'exit');
    const said = await stopStalePostmaster(folder(), join(folder(), '.'));
    expect(said).toBe(
      `Stopped a stale embedded PostgreSQL (pid ${stale.pid}) left running in ${join(folder(), '.')} ` +
        `by a process that is gone (pid ${gone})`,
    );
    // Stopped before it returned: SIGINT, PostgreSQL's fast shutdown.
    expect(stale.signalCode ?? (await exited)[1]).toBe('SIGINT');
  });

  it('stops one with no owner recorded', async () => {
    const stale = await postmaster();
    expect(await stopStalePostmaster(folder(), folder())).toMatch(
      new RegExp(`\\(pid ${stale.pid}\\) .*\\(no owner recorded\\)$`),
    );
  });

  it('gives up on one that outlives SIGINT by 15 s, naming it and what to do', async () => {
    // A postmaster that says so when SIGINT comes, and stays.
    const stubborn = spawn(
      process.execPath,
      [
        '-e',
        "process.on('SIGINT', () => process.stdout.write('SIGINT\\n')); process.stdout.write('ready\\n'); setInterval(() => {}, 1000)",
        'postgres',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    children.push(stubborn);
    let said = '';
    stubborn
      .stdout!.setEncoding('utf8')
      .on('data', (text: string) => (said += text));
    await eventually('it ready', () =>
      said.includes('ready') ? true : undefined,
    );
    await writeFile(join(folder(), 'postmaster.pid'), `${stubborn.pid}\n`);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const stopping = stopStalePostmaster(folder(), folder());
      await eventually('its SIGINT', () =>
        said.includes('SIGINT') ? true : undefined,
      );
      vi.setSystemTime(Date.now() + 15_001);
      await expect(stopping).rejects.toThrow(
        new Error(
          `A stale embedded PostgreSQL (pid ${stubborn.pid}) in ${folder()} did not stop ` +
            'within 15 s of SIGINT: stop it, or set DATA_DIR elsewhere.',
        ),
      );
    } finally {
      vi.useRealTimers();
    }
    expect(isRunning(stubborn)).toBe(true);
  }, 60_000);
});
