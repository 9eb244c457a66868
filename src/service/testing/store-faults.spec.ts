import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../../../test/support/poll.js';
import {
  parentWithChild,
  signalsOnlyBelowThisProcess,
} from '../../../test/support/processes.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import {
  DatabaseFaults,
  embeddedDatabase,
  NoFaults,
  type PausableDatabase,
} from './store-faults.js';
import { clusterOf } from './store-folder.js';

/** A database that records what it was asked. */
function recordingDatabase(): PausableDatabase & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    pause: () => {
      calls.push('pause');
      return Promise.resolve();
    },
    resume: () => {
      calls.push('resume');
      return Promise.resolve();
    },
  };
}

describe('DatabaseFaults: a database held still for a while', () => {
  it('pauses it, resumes it after the time given, and says so through `over`', async () => {
    const database = recordingDatabase();
    const faults = new DatabaseFaults(database);
    const outage = await faults.databaseDown(20);
    expect(database.calls).toEqual(['pause']);
    await outage.over;
    expect(database.calls).toEqual(['pause', 'resume']);
    // Over: another outage may begin.
    await (
      await faults.databaseDown(1)
    ).over;
    expect(database.calls).toEqual(['pause', 'resume', 'pause', 'resume']);
  });

  it('refuses a second outage while one lasts, naming the fix', async () => {
    const faults = new DatabaseFaults(recordingDatabase());
    const outage = await faults.databaseDown(60_000);
    await expect(faults.databaseDown(10)).rejects.toThrow(
      'The database is down already: await outage.end() first.',
    );
    await outage.end();
  });

  it('ends an outage early, once, whoever ends it', async () => {
    const database = recordingDatabase();
    const faults = new DatabaseFaults(database);
    const outage = await faults.databaseDown(60_000);
    await Promise.all([outage.end(), outage.end(), faults.end()]);
    await outage.over;
    expect(database.calls).toEqual(['pause', 'resume']);
    await faults.end();
    expect(database.calls).toEqual(['pause', 'resume']);
  });

  it('is ended by end() of the faults, as stop() does', async () => {
    const database = recordingDatabase();
    const faults = new DatabaseFaults(database);
    const outage = await faults.databaseDown(60_000);
    await faults.end();
    await outage.over;
    expect(database.calls).toEqual(['pause', 'resume']);
  });
});

describe('NoFaults: a store on a database it does not own', () => {
  it('refuses an outage, naming the option that allows one', async () => {
    await expect(new NoFaults().databaseDown()).rejects.toThrow(
      'databaseDown() stops the embedded PostgreSQL of a store: start the store without databaseUrl.',
    );
  });
});

describe('embeddedDatabase: SIGSTOP to the postmaster and its backends', () => {
  const dataDir = useTempFolder('store-faults-');
  let postmaster: ChildProcess | undefined;
  beforeEach(() => signalsOnlyBelowThisProcess());
  afterEach(() => {
    vi.restoreAllMocks();
    postmaster?.kill('SIGKILL');
    postmaster = undefined;
  });

  /** A process's state letter in /proc: T when stopped. */
  const state = (pid: number): string => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  };

  it('stops the postmaster named in postmaster.pid and every process below it, then continues them', async () => {
    // A stand-in postmaster with one backend.
    const started = await parentWithChild();
    postmaster = started.parent;
    const backend = started.child;
    await mkdir(clusterOf(dataDir()), { recursive: true });
    await writeFile(
      join(clusterOf(dataDir()), 'postmaster.pid'),
      `${postmaster.pid}\n${clusterOf(dataDir())}\n`,
    );
    const database = embeddedDatabase(dataDir());
    await expect(database.pause()).resolves.toBeUndefined();
    const pids = [postmaster.pid!, backend];
    await eventually('both stopped', () =>
      pids.every((pid) => state(pid) === 'T') ? true : undefined,
    );
    await expect(database.resume()).resolves.toBeUndefined();
    await eventually('both running again', () =>
      pids.every((pid) => state(pid) !== 'T') ? true : undefined,
    );
    process.kill(backend, 'SIGKILL');
  });

  it('refuses to pause a store whose PostgreSQL does not run', async () => {
    await expect(embeddedDatabase(dataDir()).pause()).rejects.toThrow(
      'The store has no PostgreSQL running.',
    );
  });
});
