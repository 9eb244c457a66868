import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
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
});
