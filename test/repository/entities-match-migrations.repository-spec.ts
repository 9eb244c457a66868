import { DataSource } from 'typeorm';
import { ApiTokenEntity, PlantEntity } from '../../src/lib/index.js';
import { migratedDatabase } from '../support/migrated-database.js';

/**
 * What `typeorm migration:generate` would write for a host's DataSource with the package's
 * entities, once the package's migrations ran: the statements of TypeORM's own schema
 * builder, the public API that command calls.
 */
async function proposedAfterMigrations(schema?: string): Promise<string[]> {
  const dataSource = new DataSource({
    type: 'postgres',
    url: await migratedDatabase('generate', schema),
    schema,
    entities: [PlantEntity, ApiTokenEntity],
  });
  await dataSource.initialize();
  try {
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
