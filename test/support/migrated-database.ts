import pg from 'pg';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { PLANT_STORE_MIGRATIONS } from '../../src/lib/index.js';
import { createScratchDatabase } from './scratch-database.js';

/**
 * A new database with the package's migrations run by TypeORM, as a host's migration run
 * does; with `schema`, that schema is made first (TypeORM does not make it) and the
 * DataSource keeps its tables there.
 */
export async function migratedDatabase(
  label: string,
  schema?: string,
): Promise<string> {
  const url = await createScratchDatabase(inject('databaseUrl'), label);
  if (schema !== undefined) {
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await sql.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
    await sql.end();
  }
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema,
    migrations: PLANT_STORE_MIGRATIONS,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
  return url;
}
