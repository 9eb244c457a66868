import pg from 'pg';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import {
  ApiTokenEntity,
  PLANT_STORE_MIGRATIONS,
  PlantEntity,
} from '../src/index.js';
import { createScratchDatabase } from './support/scratch-database.js';

/**
 * What `typeorm migration:generate` would write for a host's DataSource (the package's
 * entities and migrations, the migrations run): the statements of TypeORM's own schema
 * builder, the public API that command calls.
 */
async function proposedAfterMigrations(schema?: string): Promise<string[]> {
  const url = await createScratchDatabase(inject('databaseUrl'), 'generate');
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
    entities: [PlantEntity, ApiTokenEntity],
    migrations: PLANT_STORE_MIGRATIONS,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return sql.upQueries.map((query) => query.query);
  } finally {
    await dataSource.destroy();
  }
}

describe('the entities and the migrations agree: migration:generate proposes nothing', () => {
  it('in the default schema', async () => {
    expect(await proposedAfterMigrations()).toEqual([]);
  });

  it('in a schema of the DataSource', async () => {
    expect(await proposedAfterMigrations('shop')).toEqual([]);
  });
});
