import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, MigrationExecutor, QueryRunner } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';

// Any fixed 64-bit key; every replica of this service agrees on it.
const MIGRATION_LOCK_KEY = 7_245_120_931;
const LOCK_POLL_MS = 250;
const LOCK_WAIT_MS = 120_000;

const logger = new Logger('Migrations');

async function acquireLock(queryRunner: QueryRunner): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const [{ locked }] = (await queryRunner.query(
      'SELECT pg_try_advisory_lock($1) AS locked',
      [MIGRATION_LOCK_KEY],
    )) as [{ locked: boolean }];
    if (locked) return;
    if (Date.now() > deadline) {
      throw new Error(
        'Timed out waiting for another replica to finish migrating.',
      );
    }
    await sleep(LOCK_POLL_MS);
  }
}

/** Brings the schema up to date under an advisory lock, on a connection without statement timeout. */
export async function runMigrations(
  options: PostgresDataSourceOptions,
): Promise<string[]> {
  const dataSource = new DataSource({
    ...options,
    extra: { ...options.extra, statement_timeout: 0, query_timeout: undefined },
  });
  await dataSource.initialize();
  try {
    const queryRunner = dataSource.createQueryRunner();
    await queryRunner.connect();
    try {
      await acquireLock(queryRunner);
      // The executor runs on the connection that holds the lock.
      const executor = new MigrationExecutor(dataSource, queryRunner);
      executor.transaction = 'all';
      const applied = await executor.executePendingMigrations();
      for (const migration of applied) logger.log(`Applied ${migration.name}`);
      return applied.map((migration) => migration.name);
    } finally {
      await queryRunner.query('SELECT pg_advisory_unlock($1)', [
        MIGRATION_LOCK_KEY,
      ]);
      await queryRunner.release();
    }
  } finally {
    await dataSource.destroy();
  }
}
