import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../test-kit/free-port.mjs';
import { eventually } from '../../../test/support/poll.js';
import {
  CLUSTER_FOLDER,
  defaultCacheDir,
  makeCacheDir,
  templateCluster,
} from '../testing/template-cluster.js';
import { copyTree } from '../testing/tree-copy.js';
import { isAlive, pidIn } from './pid-files.js';
import { PostgresProcess } from './postgres-process.js';

/** A process's group and real user id, as /proc tells them. */
async function groupAndUser(pid: number): Promise<[number, number]> {
  // stat: "pid (comm) state ppid pgrp ..."; comm has no ')' here ("postgres").
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
  return [pgrp, uid];
}

describe('PostgresProcess: the embedded PostgreSQL binary in a process group of its own', () => {
  let dataDir: string;
  let clusterDir: string;
  let port: number;
  let lines: string[];
  let running: PostgresProcess | undefined;
  const postmaster = async () =>
    (await pidIn(join(clusterDir, 'postmaster.pid')))!;
  const start = () =>
    PostgresProcess.start(clusterDir, port, (line) => lines.push(line));

  beforeAll(async () => {
    // A copy of the test kit's cluster: none of this folder's code runs outside the tests.
    const cacheDir = defaultCacheDir();
    await makeCacheDir(cacheDir);
    const template = await templateCluster(cacheDir);
    dataDir = await mkdtemp(join(tmpdir(), 'postgres-process-'));
    await chmod(dataDir, 0o711);
    clusterDir = join(dataDir, CLUSTER_FOLDER);
    await copyTree(join(template, CLUSTER_FOLDER), clusterDir).done;
    port = await freePort();
  }, 120_000);

  beforeEach(() => {
    lines = [];
  });

  afterEach(async () => {
    await running?.stop();
    running = undefined;
  }, 60_000);

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts once ready, in its own process group (as `postgres` under root), stopped with this process', async () => {
    const exitListeners = process.listenerCount('exit');
    running = await start();
    expect(
      lines.some((line) =>
        line.includes('database system is ready to accept connections'),
      ),
    ).toBe(true);
    const pid = await postmaster();
    const uid =
      userInfo().uid === 0
        ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
        : userInfo().uid;
    expect(await groupAndUser(pid)).toEqual([pid, uid]);
    expect(process.listenerCount('exit')).toBe(exitListeners + 1);
    await running.stop();
    expect(isAlive(pid)).toBe(false);
    expect(process.listenerCount('exit')).toBe(exitListeners);
  }, 60_000);

  it('stops fast when this process exits', async () => {
    const before = process.listeners('exit');
    running = await start();
    const [stopOnExit] = process
      .listeners('exit')
      .filter((listener) => !before.includes(listener));
    stopOnExit(0);
    await eventually('the server gone', () =>
      process.listenerCount('exit') === before.length ? true : undefined,
    );
    expect(lines.join('\n')).toContain('received fast shutdown request');
  }, 60_000);

  it('stop(): a fast shutdown, resolved once it exited; a second stop resolves at once', async () => {
    running = await start();
    await running.stop();
    expect(
      lines.filter((line) => line.includes('shutdown request')).length,
    ).toBe(1);
    expect(lines.join('\n')).toContain('received fast shutdown request');
    await running.stop();
    await running.discard();
  }, 60_000);

  it('discard(): an immediate shutdown, no checkpoint', async () => {
    running = await start();
    await running.discard();
    expect(lines.join('\n')).toContain('received immediate shutdown request');
    expect(lines.join('\n')).not.toContain('shutting down');
  }, 60_000);

  it('resolves a stop at once for a server killed from outside', async () => {
    const exitListeners = process.listenerCount('exit');
    running = await start();
    process.kill(await postmaster(), 'SIGKILL');
    await eventually('its exit seen', () =>
      process.listenerCount('exit') === exitListeners ? true : undefined,
    );
    await expect(running.stop()).resolves.toBeUndefined();
    await running.discard();
  }, 60_000);

  it('rejects when PostgreSQL exits while starting, with its reason logged', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'postgres-process-empty-'));
    try {
      await expect(
        PostgresProcess.start(empty, port, (line) => lines.push(line)),
      ).rejects.toThrow(new Error('PostgreSQL exited while starting'));
      expect(lines.join('\n')).toContain(
        `could not access the server configuration file "${join(empty, 'postgresql.conf')}"`,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }, 60_000);
});
