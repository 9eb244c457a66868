import type { DataSource } from 'typeorm';
import { DatabaseStartup } from './database-startup.js';
import { runMigrations } from './migration-runner.js';

vi.mock('./migration-runner.js', () => ({ runMigrations: vi.fn() }));

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
  });

/** A DataSource whose initialize() answers as told, one answer per call. */
function dataSource(answers: (() => Promise<void>)[]) {
  const initialize = vi.fn(() =>
    (answers.shift() ?? (() => Promise.resolve()))(),
  );
  return {
    source: { options: {}, initialize } as unknown as DataSource,
    initialize,
  };
}

describe('DatabaseStartup', () => {
  beforeEach(() => {
    vi.mocked(runMigrations).mockReset();
    vi.mocked(runMigrations).mockResolvedValue([]);
  });

  it('migrates, then connects, and says started', async () => {
    const { source, initialize } = dataSource([]);
    const startup = new DatabaseStartup(source);
    expect(startup.isStarted).toBe(false);
    await startup.started;
    expect(startup.isStarted).toBe(true);
    expect(runMigrations).toHaveBeenCalledTimes(1);
    expect(initialize).toHaveBeenCalledTimes(1);
  });

  it('tries again while the database cannot be reached, and starts once it can', async () => {
    vi.mocked(runMigrations)
      .mockRejectedValueOnce(refused())
      .mockRejectedValueOnce(refused());
    const { source, initialize } = dataSource([
      () => Promise.reject(refused()),
    ]);
    const startup = new DatabaseStartup(source);
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
    const startup = new DatabaseStartup(dataSource([]).source);
    await expect(startup.started).rejects.toBe(missing);
    expect(startup.isStarted).toBe(false);
  });

  it('stops trying at shutdown, not started, without an error', async () => {
    vi.mocked(runMigrations).mockRejectedValue(refused());
    const startup = new DatabaseStartup(dataSource([]).source);
    await startup.beforeApplicationShutdown();
    await expect(startup.started).resolves.toBeUndefined();
    expect(startup.isStarted).toBe(false);
  });
});
