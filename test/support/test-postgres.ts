import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedPostgresServer } from '../../src/service/database/embedded-postgres.js';
import { signalEach } from '../../src/service/testing/process-tree.js';
import { freePort } from '../../test-kit/free-port.mjs';
import { processTree } from '../../test-kit/process-tree.mjs';

export interface TestPostgres {
  url: string;
  /** Stops the server; with `keepData`, it can be started again on the same port. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** A clean stop (fast shutdown) and a start again. */
  restart(): Promise<void>;
  /** SIGKILL to the server and every backend: a crash, recovered from the WAL on start(). */
  crash(): Promise<void>;
  /**
   * SIGSTOP to the server and every backend: a hung database. Connections stay open but
   * nothing answers (new ones wait in the kernel's accept queue) until resume().
   */
  pause(): Promise<void>;
  /** SIGCONT to the processes pause() stopped: they carry on where they were. */
  resume(): Promise<void>;
  start(): Promise<void>;
  /** The postmaster's process id (its backends are its children). */
  postmasterPid(): Promise<number>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A throwaway embedded PostgreSQL in a temporary directory, on a free port. */
export async function startTestPostgres(name: string): Promise<TestPostgres> {
  const dataDir = join(
    tmpdir(),
    `plant-store-${name}-${process.pid}-${Date.now()}`,
  );
  // A free port can be taken again before PostgreSQL binds it: try another one then.
  let options = {
    dataDir,
    port: await freePort(),
    database: 'plant_store_test',
    onLog: () => {},
  };
  let server: EmbeddedPostgresServer | undefined;
  for (let attempt = 1; server === undefined; attempt += 1) {
    try {
      server = await EmbeddedPostgresServer.start(options);
    } catch (error) {
      if (attempt >= 3) throw error;
      options = { ...options, port: await freePort() };
    }
  }
  const url = server.url;
  const postmasterPid = async (): Promise<number> => {
    const pidFile = await readFile(
      join(dataDir, 'postgres', 'postmaster.pid'),
      'utf8',
    );
    return Number(pidFile.split('\n')[0]);
  };
  let paused: number[] = [];
  return {
    url,
    async stop({ keepData = false } = {}) {
      await server?.stop();
      server = undefined;
      if (!keepData) await rm(dataDir, { recursive: true, force: true });
    },
    async restart() {
      await server?.stop();
      server = await EmbeddedPostgresServer.start(options);
    },
    async crash() {
      const postmaster = await postmasterPid();
      const victims = processTree(postmaster);
      for (const pid of victims) process.kill(pid, 'SIGKILL');
      while (victims.some(isAlive)) await sleep(20);
      // The library's handle saw its process die; a new start makes a new one.
      server = undefined;
    },
    async pause() {
      // The postmaster first, so that it forks no new backend behind our back.
      const postmaster = await postmasterPid();
      process.kill(postmaster, 'SIGSTOP');
      paused = processTree(postmaster);
      for (const pid of paused) process.kill(pid, 'SIGSTOP');
    },
    async resume() {
      // A backend that was exiting when paused is reaped as soon as the postmaster runs on.
      signalEach(paused, 'SIGCONT');
      paused = [];
    },
    async start() {
      server = await EmbeddedPostgresServer.start(options);
    },
    postmasterPid,
  };
}
