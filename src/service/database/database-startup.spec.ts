import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import { captureNestLines } from '../../../test/support/nest-logs.js';
import type { WriteCircuit } from '../../lib/index.js';
import { DatabaseStartup } from './database-startup.js';
import { runMigrations } from './migration-runner.js';

vi.mock('./migration-runner.js', () => ({ runMigrations: vi.fn() }));

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });

/**
 * A DataSource whose initialize() answers as told, one answer per call, and is initialized
 * with `pool` once one succeeds.
 */
function dataSource(answers: (() => Promise<void>)[]) {
  const pool = new EventEmitter();
  const source = {
    options: {},
    isInitialized: false,
    driver: { master: pool },
  };
  const initialize = vi.fn(async () => {
    await (answers.shift() ?? (() => Promise.resolve()))();
    source.isInitialized = true;
  });
  return {
    source: Object.assign(source, { initialize }) as unknown as DataSource,
    initialize,
    pool,
  };
}

/** A write circuit whose refresh resolves when the test says. */
function writeCircuit() {
  let refreshed: () => void = () => {};
  const refresh = vi.fn(
    () => new Promise<void>((resolve) => (refreshed = resolve)),
  );
  return {
    circuit: { refresh } as unknown as WriteCircuit,
    refresh,
    refreshed: () => refreshed(),
  };
}

/** A write circuit that refreshes at once. */
const circuit = () =>
  ({ refresh: () => Promise.resolve() }) as unknown as WriteCircuit;

describe('DatabaseStartup', () => {
  beforeEach(() => {
    vi.mocked(runMigrations).mockReset();
    vi.mocked(runMigrations).mockResolvedValue([]);
  });

  it('migrates, then connects, listens for broken connections, and says started', async () => {
    const { source, initialize, pool } = dataSource([]);
    const startup = new DatabaseStartup(source, circuit());
    expect(startup.isStarted).toBe(false);
    await startup.started;
    expect(startup.isStarted).toBe(true);
    expect(runMigrations).toHaveBeenCalledTimes(1);
    expect(initialize).toHaveBeenCalledTimes(1);
    // listenForBrokenConnections: every connection handed out keeps an 'error' listener.
    expect(pool.listenerCount('acquire')).toBe(1);
  });

  it('is started only once the write circuit has probed the open pool: creates that met it closed may have called the database down', async () => {
    const { source } = dataSource([]);
    const { circuit: probing, refresh, refreshed } = writeCircuit();
    const startup = new DatabaseStartup(source, probing);
    await vi.waitFor(() => expect(refresh).toHaveBeenCalledTimes(1));
    expect(source.isInitialized).toBe(true);
    expect(startup.isStarted).toBe(false);
    refreshed();
    await startup.started;
    expect(startup.isStarted).toBe(true);
  });

  it('tries again while the database cannot be reached, and starts once it can', async () => {
    vi.mocked(runMigrations)
      .mockRejectedValueOnce(refused())
      .mockRejectedValueOnce(refused());
    const { source, initialize } = dataSource([
      () => Promise.reject(refused()),
    ]);
    const startup = new DatabaseStartup(source, circuit());
    await startup.started;
    expect(startup.isStarted).toBe(true);
    expect(runMigrations).toHaveBeenCalledTimes(4);
    expect(initialize).toHaveBeenCalledTimes(2);
  });

  it('fails on anything else: a database that refuses is not a database that is away', async () => {
    const missing = Object.assign(
      new Error('database "plants" does not exist'),
      { code: '3D000' },
    );
    vi.mocked(runMigrations).mockRejectedValueOnce(missing);
    const startup = new DatabaseStartup(dataSource([]).source, circuit());
    await expect(startup.started).rejects.toBe(missing);
    expect(startup.isStarted).toBe(false);
  });

  it('stops trying at shutdown, not started, without an error', async () => {
    vi.mocked(runMigrations).mockRejectedValue(refused());
    const startup = new DatabaseStartup(dataSource([]).source, circuit());
    await startup.beforeApplicationShutdown();
    await expect(startup.started).resolves.toBeUndefined();
    expect(startup.isStarted).toBe(false);
  });

  describe('what it says', () => {
    let logged: [string, unknown, unknown][];

    beforeEach(() => {
      logged = captureNestLines(['log', 'warn']);
      // Time stands still: the start takes 0 ms.
      vi.useFakeTimers({ toFake: ['Date'] });
    });

    afterEach(() => {
      vi.useRealTimers();
      vi.restoreAllMocks();
    });

    it('says it started, and how long after the start', async () => {
      const startup = new DatabaseStartup(dataSource([]).source, circuit());
      await startup.started;
      expect(logged).toEqual([
        [
          'log',
          'Database migrated and connected 0 ms after the start',
          'DatabaseStartup',
        ],
      ]);
    });

    it('warns once, with the reason, while the database cannot be reached, and counts the attempts', async () => {
      vi.mocked(runMigrations)
        .mockRejectedValueOnce(refused())
        .mockRejectedValueOnce({ code: 'ECONNREFUSED' });
      const { source } = dataSource([() => Promise.reject(refused())]);
      const startup = new DatabaseStartup(source, circuit());
      await startup.started;
      expect(logged).toEqual([
        [
          'warn',
          'The database cannot be reached (connect ECONNREFUSED 127.0.0.1:5432): ' +
            'not ready, creates answered 503, trying again until it answers',
          'DatabaseStartup',
        ],
        [
          'log',
          'Database migrated and connected 0 ms after the start, after 3 attempt(s) the database could not answer',
          'DatabaseStartup',
        ],
      ]);
    });

    it('names what was thrown when it is no Error', async () => {
      vi.mocked(runMigrations).mockRejectedValueOnce({ code: 'ECONNREFUSED' });
      const startup = new DatabaseStartup(dataSource([]).source, circuit());
      await startup.started;
      expect(logged[0]).toEqual([
        'warn',
        'The database cannot be reached ([object Object]): ' +
          'not ready, creates answered 503, trying again until it answers',
        'DatabaseStartup',
      ]);
    });
  });

  it('stops at once when stopped during a pause between attempts, trying no more', async () => {
    vi.mocked(runMigrations).mockRejectedValue(refused());
    const startup = new DatabaseStartup(dataSource([]).source, circuit());
    await vi.waitFor(() => expect(runMigrations).toHaveBeenCalledTimes(1));
    // Once the microtasks have run, the attempt has failed and the first pause has begun.
    await new Promise((resolve) => setImmediate(resolve));
    await startup.beforeApplicationShutdown();
    await expect(startup.started).resolves.toBeUndefined();
    expect(runMigrations).toHaveBeenCalledTimes(1);
  });

  it('ends quietly when stopped during an attempt, whatever that attempt then fails with', async () => {
    let fail: (error: unknown) => void = () => {};
    vi.mocked(runMigrations).mockReturnValueOnce(
      new Promise((_resolve, reject) => (fail = reject)),
    );
    const startup = new DatabaseStartup(dataSource([]).source, circuit());
    await vi.waitFor(() => expect(runMigrations).toHaveBeenCalledTimes(1));
    const stopped = startup.beforeApplicationShutdown();
    fail(Object.assign(new Error('no such database'), { code: '3D000' }));
    await stopped;
    await expect(startup.started).resolves.toBeUndefined();
    expect(startup.isStarted).toBe(false);
    expect(runMigrations).toHaveBeenCalledTimes(1);
  });

  it('waits at shutdown for a migration that hangs no longer than its bound', async () => {
    vi.mocked(runMigrations).mockReturnValueOnce(new Promise(() => {}));
    const startup = new DatabaseStartup(dataSource([]).source, circuit());
    await startup.beforeApplicationShutdown();
    expect(startup.isStarted).toBe(false);
  }, 60_000);
});
