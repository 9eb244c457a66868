import { randomBytes } from 'node:crypto';
import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { TypeOrmModule } from '@nestjs/typeorm';
import pg from 'pg';
import { inject } from 'vitest';
import { hashToken } from '../src/lib/managed-tokens/token-hash.js';
import { WriteCircuit } from '../src/lib/database/write-circuit.js';
import {
  AuthModule,
  PLANT_STORE_MIGRATIONS,
  PlantsModule,
} from '../src/lib/index.js';
import { eventually } from './support/poll.js';
import {
  newPlantJson,
  postPlant,
  uniqueId,
  untilTokenAnswered,
} from './support/plants.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { TOKEN } from './support/tokens.js';

const SCHEMA = 'shop';

/** The names of the tables and functions of `schema`, sorted. */
async function objectsIn(sql: pg.Client, schema: string): Promise<string[]> {
  const { rows } = await sql.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1
     UNION ALL
     SELECT proname || '()' FROM pg_proc JOIN pg_namespace n ON n.oid = pronamespace
     WHERE nspname = $1
     ORDER BY name`,
    [schema],
  );
  return rows.map((row) => row.name);
}

/**
 * A host whose DataSource keeps its tables in schema `shop` (created by the host, as
 * TypeORM keeps its own migrations table there too), with pool options of its own in
 * `extra`, and the package's migrations run by TypeORM.
 */
describe('the modules on a DataSource with a schema', () => {
  let app: NestExpressApplication;
  let url: string;
  let sql: pg.Client;
  let database: string;

  beforeAll(async () => {
    const databaseUrl = await createScratchDatabase(
      inject('databaseUrl'),
      'schema',
    );
    database = new URL(databaseUrl).pathname.slice(1);
    sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    await sql.query(`CREATE SCHEMA ${SCHEMA}`);
    @Module({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: databaseUrl,
          schema: SCHEMA,
          applicationName: 'shop',
          extra: { application_name: 'shop-eu' },
          autoLoadEntities: true,
          migrations: PLANT_STORE_MIGRATIONS,
          migrationsRun: true,
        }),
        PlantsModule.forRoot(),
        AuthModule.forRoot({ tokens: [TOKEN] }),
      ],
    })
    class ShopModule {}
    app = await NestFactory.create<NestExpressApplication>(ShopModule as Type, {
      logger: false,
      rawBody: true,
    });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app?.close();
    await sql?.end();
  });

  it('makes every table and function of the package in the schema, none in public', async () => {
    expect(await objectsIn(sql, SCHEMA)).toEqual([
      'api_tokens',
      'api_tokens_notify_change()',
      'commit_probe',
      'migrations',
      'plants',
    ]);
    expect(await objectsIn(sql, 'public')).toEqual([]);
    const { rows } = await sql.query<{ trigger: string }>(
      `SELECT tgname AS trigger FROM pg_trigger
       WHERE tgrelid = 'shop.api_tokens'::regclass AND NOT tgisinternal ORDER BY 1`,
    );
    expect(rows.map((row) => row.trigger)).toEqual([
      'api_tokens_notify_row_change',
      'api_tokens_notify_truncate',
    ]);
  });

  it('creates plants in the schema', async () => {
    const id = uniqueId();
    const created = await postPlant(url, newPlantJson(id, 'Fern', 'shade'));
    expect(created.status).toBe(200);
    const { rows } = await sql.query<{ name: string }>(
      'SELECT name FROM shop.plants WHERE id = $1::bigint',
      [id.toString()],
    );
    expect(rows).toEqual([{ name: 'Fern' }]);
  });

  it("follows the schema's api_tokens through its trigger, on a connection with the DataSource's own options", async () => {
    const token = `pst_${randomBytes(32).toString('base64url')}`;
    const name = `shop-${uniqueId()}`;
    await sql.query(
      'INSERT INTO shop.api_tokens (name, token_hash) VALUES ($1, $2)',
      [name, hashToken(token)],
    );
    await untilTokenAnswered(url, token, 200, 'the inserted token accepted');
    await sql.query(
      'UPDATE shop.api_tokens SET revoked_at = now() WHERE name = $1',
      [name],
    );
    await untilTokenAnswered(url, token, 401, 'the revoked token refused');

    // extra's application_name, as the pool's connections have it, marked as the listener.
    const listeners = await eventually('the listening connection', async () => {
      const { rows } = await sql.query<{ name: string }>(
        `SELECT application_name AS name FROM pg_stat_activity
         WHERE datname = $1 AND application_name LIKE '%token-sync'`,
        [database],
      );
      return rows.length > 0 ? rows : undefined;
    });
    expect(listeners).toEqual([{ name: 'shop-eu-token-sync' }]);
  });

  it('probes commits in the schema', async () => {
    await expect(
      app.get(WriteCircuit, { strict: false }).check(),
    ).resolves.toBeUndefined();
    const { rows } = await sql.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM shop.commit_probe',
    );
    expect(rows).toEqual([{ count: 1 }]);
  });
});
