import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import pg from 'pg';
import { watchedClock } from '../../../test/support/clock.js';
import {
  linkedKitTemplate,
  templateWithoutConfiguration,
} from '../../../test/support/kit-template.js';
import { eventually } from '../../../test/support/poll.js';
import {
  processNaming,
  signalsOnlyBelowThisProcess,
} from '../../../test/support/processes.js';
import { useProcessFolder } from '../../../test/support/temp-folder.js';
import { embeddedDatabaseUrl } from '../database/embedded-database-url.js';
import { isAlive } from '../database/pid-files.js';
import { OWNER_FILE } from '../database/stale-postmaster.js';
import { freePort } from './free-port.js';
import { processTree, signalEach } from './process-tree.js';
import { sparesOf } from './spare-clusters.js';
import { embeddedDatabase } from './store-faults.js';
import { clusterOf, KEEPER_PID_FILE, postmasterPid } from './store-folder.js';
import { CLUSTER_FOLDER, PASSWORD_FILE } from './template-cluster.js';

/** The signals the keeper listens for: what it adds is taken off again after each test. */
const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * The keeper, a script, run in this process: its argument is the orders, its standard input a
 * pipe the test writes to and ends, what it prints is collected, its exit recorded. The first
 * run imports it by name (so Vitest, and Stryker, know this spec runs it), later runs a fresh
 * copy each.
 */
let runs = 0;
async function runKeeper(orders: {
  template: string;
  dataDir: string;
  port: number;
}) {
  const input = new PassThrough();
  const said: { ready?: true; failed?: string }[] = [];
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
        said.push(JSON.parse(line) as (typeof said)[number]);
      done();
    },
  });
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const before = new Map(
    SIGNALS.map((signal) => [signal, process.listeners(signal)]),
  );
  vi.spyOn(process, 'stdin', 'get').mockReturnValue(
    input as unknown as typeof process.stdin,
  );
  vi.spyOn(process, 'stdout', 'get').mockReturnValue(
    output as unknown as typeof process.stdout,
  );
  vi.spyOn(process, 'exit').mockImplementation(((code: number) =>
    exited(code)) as never);
  argvBefore = process.argv;
  process.argv = [
    process.argv[0],
    'database-keeper.js',
    JSON.stringify(orders),
  ];
  runs += 1;
  if (runs === 1) await import('./database-keeper.js');
  else {
    const script = `./database-keeper.js?run=${runs}`;
    await import(/* @vite-ignore */ script);
  }
  process.argv = argvBefore;
  const added = (signal: (typeof SIGNALS)[number]) =>
    process
      .listeners(signal)
      .filter((listener) => !before.get(signal)?.includes(listener));
  for (const signal of SIGNALS)
    for (const listener of added(signal))
      keeperListeners.push([signal, listener]);
  return {
    input,
    said,
    exit,
    /** The keeper's own listener for `signal`. */
    on: (signal: (typeof SIGNALS)[number]) => added(signal),
    ready: () =>
      eventually('the keeper to say it is ready', () =>
        said.some((message) => message.ready === true) ? true : undefined,
      ),
  };
}
let argvBefore = process.argv;
/** Every signal listener the keepers added, removed after each test. */
const keeperListeners: [NodeJS.Signals, NodeJS.SignalsListener][] = [];

describe(
  'the database keeper: a store’s PostgreSQL, kept until its runner is gone',
  { timeout: 60_000 },
  () => {
    let template: string;
    let dataDir: string;
    let port: number;
    const services: ChildProcess[] = [];
    let postmaster: number | undefined;

    const folder = useProcessFolder('database-keeper-spec-');
    /** A store's folder, as startPlantStore makes one. */
    const storeFolder = () => mkdtemp(join(folder(), 'store-'));

    beforeAll(async () => {
      // A template of this file's own: the spares the keeper makes beside it are the file's.
      template = await linkedKitTemplate(folder());
    }, 120_000);

    beforeEach(async () => {
      dataDir = await storeFolder();
      port = await freePort();
      postmaster = undefined;
      signalsOnlyBelowThisProcess();
    });
    afterEach(async () => {
      process.argv = argvBefore;
      for (const [signal, listener] of keeperListeners.splice(0))
        process.removeListener(signal, listener);
      for (const service of services.splice(0)) service.kill('SIGKILL');
      // What a failed test left running.
      if (postmaster !== undefined)
        signalEach(processTree(postmaster).reverse(), 'SIGKILL');
      vi.restoreAllMocks();
      await rm(dataDir, { recursive: true, force: true });
      await rm(sparesOf(template), { recursive: true, force: true });
    });

    /** An idle process standing for the service. */
    async function service(): Promise<ChildProcess> {
      const child = await processNaming('service');
      services.push(child);
      return child;
    }

    async function started() {
      const keeper = await runKeeper({ template, dataDir, port });
      await keeper.ready();
      postmaster = await postmasterPid(dataDir);
      return keeper;
    }

    async function answers(): Promise<boolean> {
      const password = (
        await readFile(join(template, PASSWORD_FILE), 'utf8')
      ).trim();
      const client = new pg.Client({
        connectionString: embeddedDatabaseUrl(password, port),
      });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => undefined);
      }
    }

    it('starts the PostgreSQL of a copy of the template, recording itself as its keeper and owner', async () => {
      const keeper = await started();
      expect(keeper.said).toEqual([{ ready: true }]);
      expect(await answers()).toBe(true);
      for (const file of [KEEPER_PID_FILE, OWNER_FILE])
        expect(await readFile(join(dataDir, file), 'utf8')).toBe(
          `${process.pid}\n`,
        );
      expect(await readFile(join(dataDir, PASSWORD_FILE), 'utf8')).toBe(
        await readFile(join(template, PASSWORD_FILE), 'utf8'),
      );
      // A copy, not a nested one.
      expect(await readdir(clusterOf(dataDir))).not.toContain(CLUSTER_FOLDER);
      keeper.input.end();
      expect(await keeper.exit).toBe(0);
    });

    it('once its pipe ends, waits for the service it was told of, then stops the database and removes the folder', async () => {
      const keeper = await started();
      const running = await service();
      // The service's pid in two writes, and a line that is no pid, which changes nothing.
      const pid = String(running.pid);
      keeper.input.write(pid.slice(0, 2));
      keeper.input.write(`${pid.slice(2)}\nnot a pid\n`);
      const clock = watchedClock();
      keeper.input.end();
      // Some turns of its wait for the service.
      await clock.turns(3);
      expect(await answers()).toBe(true);
      expect(await readdir(dataDir)).toContain(CLUSTER_FOLDER);

      running.kill('SIGKILL');
      expect(await keeper.exit).toBe(0);
      expect(isAlive(postmaster!)).toBe(false);
      await expect(readdir(dataDir)).rejects.toThrow('ENOENT');
    });

    it('kills a service still running 15 s after its pipe ended', async () => {
      const keeper = await started();
      const stuck = await service();
      const ended = once(stuck, 'exit');
      keeper.input.write(`${stuck.pid}\n`);
      const clock = watchedClock();
      keeper.input.end();
      await clock.turns(2);
      expect(stuck.exitCode).toBe(null);
      clock.advance(15_001);
      expect(await ended).toEqual([null, 'SIGKILL']);
      expect(await keeper.exit).toBe(0);
    });

    it('continues a database a fault had paused, so that it can stop', async () => {
      const keeper = await started();
      await embeddedDatabase(dataDir).pause();
      keeper.input.end();
      expect(await keeper.exit).toBe(0);
      expect(isAlive(postmaster!)).toBe(false);
      await expect(readdir(dataDir)).rejects.toThrow('ENOENT');
    });

    it('stops on SIGTERM or a broken pipe as on its end, never on Ctrl+C (the runner’s to handle)', async () => {
      const first = await started();
      const [ctrlC] = first.on('SIGINT');
      ctrlC('SIGINT');
      expect(await answers()).toBe(true);
      const [sigterm] = first.on('SIGTERM');
      sigterm('SIGTERM');
      expect(await first.exit).toBe(0);
      expect(isAlive(postmaster!)).toBe(false);

      dataDir = await storeFolder();
      const second = await started();
      second.input.emit('error', new Error('EPIPE'));
      expect(await second.exit).toBe(0);
      expect(isAlive(postmaster!)).toBe(false);
    });

    it('once the store serves, copies a spare for the next start, finished before it exits; the next start takes it', async () => {
      const first = await started();
      first.input.end('serving\n');
      expect(await first.exit).toBe(0);
      const [spare] = await readdir(sparesOf(template));
      expect(spare).toMatch(/^ready-/);

      dataDir = await storeFolder();
      const second = await started();
      expect(await readdir(sparesOf(template))).toEqual([]);
      expect(await answers()).toBe(true);
      expect(await readdir(clusterOf(dataDir))).not.toContain(CLUSTER_FOLDER);
      second.input.end();
      expect(await second.exit).toBe(0);
    });

    it('copies no spare once it is stopping', async () => {
      const keeper = await started();
      const [sigterm] = keeper.on('SIGTERM');
      sigterm('SIGTERM');
      keeper.input.end('serving\n');
      expect(await keeper.exit).toBe(0);
      await expect(readdir(sparesOf(template))).rejects.toThrow('ENOENT');
    });

    it('says why its PostgreSQL did not start (the end of its log), then cleans up', async () => {
      // A template whose cluster PostgreSQL refuses: no configuration in it.
      const broken = `${dataDir}-broken-template`;
      await templateWithoutConfiguration(broken);
      try {
        const keeper = await runKeeper({ template: broken, dataDir, port });
        expect(await keeper.exit).toBe(0);
        expect(keeper.said).toEqual([
          {
            failed: `postgres: could not access the server configuration file "${clusterOf(dataDir)}/postgresql.conf": No such file or directory`,
          },
        ]);
        await expect(readdir(dataDir)).rejects.toThrow('ENOENT');
      } finally {
        await rm(broken, { recursive: true, force: true });
      }
    });

    it('says what failed before PostgreSQL could start (no template), then cleans up', async () => {
      const missing = join(dataDir, 'no-template');
      const keeper = await runKeeper({ template: missing, dataDir, port });
      expect(await keeper.exit).toBe(0);
      const from = join(missing, CLUSTER_FOLDER);
      const to = clusterOf(dataDir);
      expect(keeper.said).toEqual([
        {
          failed: `Error: cp -a ${from} ${to} failed (1): cp: cannot stat '${from}': No such file or directory`,
        },
      ]);
      await expect(readdir(dataDir)).rejects.toThrow('ENOENT');
    });
  },
);
