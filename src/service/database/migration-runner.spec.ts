import { Logger } from '@nestjs/common';
import pg from 'pg';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { eventually } from '../../../test/support/poll.js';
import {
  newDatabase,
  usePlainPostgres,
} from '../../../test/support/plain-postgres.js';
import { PLANT_STORE_MIGRATIONS } from '../../lib/index.js';
import { dataSourceOptions } from './data-source-options.js';
import { runMigrations } from './migration-runner.js';

/** The key every replica takes while it migrates. */
const LOCK_KEY = 7_245_120_931;

class CreateKept1700000000001 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE TABLE kept (n int)');
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE kept');
  }
}

class Fails1700000000002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('SELECT * FROM no_such_table');
  }
  async down(): Promise<void> {}
}

/** Records the settings it runs under, after a statement longer than the service's timeouts here. */
class RecordSettings1700000000003 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('SELECT pg_sleep(0.05)');
    await queryRunner.query(
      `CREATE TABLE settings AS SELECT current_setting('statement_timeout') AS statement_timeout,
         current_setting('application_name') AS application_name`,
    );
  }
  async down(): Promise<void> {}
}

describe('runMigrations: the schema brought up to date under an advisory lock', () => {
  const server = usePlainPostgres();
  let databases = 0;
  let url: string;
  let logged: unknown[];
  /** A client on the test's database, closed after it. */
  let other: pg.Client;
  const query = async (sql: string, values?: unknown[]) =>
    (await other.query(sql, values)).rows;
  const options = (
    extra: Partial<Parameters<typeof dataSourceOptions>[1]> = {},
  ) =>
    dataSourceOptions(url, {
      DATABASE_POOL_SIZE: 2,
      DATABASE_CONNECT_TIMEOUT_MS: 10_000,
      DATABASE_QUERY_TIMEOUT_MS: 10_000,
      ...extra,
    });
  const tables = async () =>
    (
      await query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      )
    ).map((row) => (row as { table_name: string }).table_name);
  /** The service's connections still open on the test's database. */
  const serviceConnections = async () =>
    (
      await query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store' AND datname = current_database()",
      )
    )[0] as { n: number };

  beforeEach(async () => {
    databases += 1;
    url = await newDatabase(server(), `migrations_${databases}`);
    other = new pg.Client({ connectionString: url });
    await other.connect();
    logged = [];
    vi.spyOn(Logger.prototype, 'log').mockImplementation(function (
      this: Logger,
      message: unknown,
    ) {
      logged.push([(this as unknown as { context?: string }).context, message]);
    });
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    vi.useRealTimers();
    await other.end();
  });

  it('applies the pending migrations, says which, and closes its connections; then finds none pending', async () => {
    const names = PLANT_STORE_MIGRATIONS.map((migration) => migration.name);
    // Idle connections kept for ever: only its own end closes them.
    const service = options();
    expect(
      await runMigrations({
        ...service,
        extra: { ...service.extra, idleTimeoutMillis: 0 },
      }),
    ).toEqual(names);
    expect(logged).toEqual(
      names.map((name) => ['Migrations', `Applied ${name}`]),
    );
    expect(await tables()).toEqual([
      'api_tokens',
      'commit_probe',
      'migrations',
      'plants',
    ]);
    await eventually('its connections closed', async () =>
      (await serviceConnections()).n === 0 ? true : undefined,
    );
    logged = [];
    expect(await runMigrations(options())).toEqual([]);
    expect(logged).toEqual([]);
  }, 60_000);

  it('runs without the service’s statement and answer timeouts, keeping its other connection settings', async () => {
    const service = options({ DATABASE_QUERY_TIMEOUT_MS: 1 });
    expect(
      await runMigrations({
        ...service,
        migrations: [RecordSettings1700000000003],
        extra: { ...service.extra, application_name: 'from-extra' },
      }),
    ).toEqual(['RecordSettings1700000000003']);
    expect(await query('SELECT * FROM settings')).toEqual([
      { statement_timeout: '0', application_name: 'from-extra' },
    ]);
  }, 60_000);

  it('applies all or nothing: a failing migration takes back those before it', async () => {
    await expect(
      runMigrations({
        ...options(),
        migrations: [CreateKept1700000000001, Fails1700000000002],
        logging: false,
      }),
    ).rejects.toThrow('relation "no_such_table" does not exist');
    expect(await tables()).toEqual(['migrations']);
    expect(await query('SELECT name FROM migrations')).toEqual([]);
    expect(logged).toEqual([]);
  }, 60_000);

  it('waits while another replica holds the lock, and migrates once it lets go, then lets go itself', async () => {
    await query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    let settled = false;
    const migrating = runMigrations({
      ...options(),
      migrations: [CreateKept1700000000001],
    }).finally(() => (settled = true));
    await eventually('a try for the lock', async () => {
      const [{ n }] = (await query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store' AND query = 'SELECT pg_try_advisory_lock($1) AS locked'",
      )) as [{ n: number }];
      return n > 0 ? true : undefined;
    });
    expect(settled).toBe(false);
    expect(await tables()).toEqual([]);
    await query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
    expect(await migrating).toEqual(['CreateKept1700000000001']);
    expect(
      await query('SELECT pg_try_advisory_lock($1) AS locked', [LOCK_KEY]),
    ).toEqual([{ locked: true }]);
  }, 60_000);

  it('gives up after two minutes of another replica holding the lock', async () => {
    await query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    vi.useFakeTimers({ toFake: ['Date'] });
    const migrating = runMigrations({
      ...options(),
      migrations: [CreateKept1700000000001],
    });
    await eventually('a try for the lock', async () => {
      const [{ n }] = (await query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store' AND query = 'SELECT pg_try_advisory_lock($1) AS locked'",
      )) as [{ n: number }];
      return n > 0 ? true : undefined;
    });
    vi.setSystemTime(Date.now() + 120_001);
    await expect(migrating).rejects.toThrow(
      new Error('Timed out waiting for another replica to finish migrating.'),
    );
    expect(await tables()).toEqual([]);
    await eventually('its connections closed', async () =>
      (await serviceConnections()).n === 0 ? true : undefined,
    );
  }, 60_000);
});
