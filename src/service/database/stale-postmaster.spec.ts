import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import {
  OWNER_FILE,
  recordPostmasterOwner,
  stopStalePostmaster,
} from './stale-postmaster.js';

/** A process that stands for a postmaster (its command line names postgres), or not. */
async function processNaming(word: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-e', 'setInterval(() => {}, 1000)', word],
    { stdio: 'ignore' },
  );
  await once(child, 'spawn');
  return child;
}

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

  it('finds nothing stale without a postmaster.pid, with an unreadable one, or one naming an ended process', async () => {
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    await writeFile(join(folder(), 'postmaster.pid'), 'not a pid\n');
    expect(await stopStalePostmaster(folder(), folder())).toBeUndefined();
    await writeFile(join(folder(), 'postmaster.pid'), '0\n');
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
});
