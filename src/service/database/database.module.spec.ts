import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import {
  newDatabase,
  usePlainPostgres,
} from '../../../test/support/plain-postgres.js';
import { PLANT_STORE_MIGRATIONS } from '../../lib/index.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import {
  DatabaseModule,
  databaseConnection,
  type DatabaseConnectionOptions,
} from './database.module.js';
import { DatabaseStartup } from './database-startup.js';

describe('databaseConnection and DatabaseModule: TypeORM over DATABASE_URL', () => {
  const server = usePlainPostgres();
  let databases = 0;
  let url: string;
  let moduleRef: TestingModule | undefined;

  /** The public tables of the test's database. */
  async function tables(): Promise<string[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
      );
      return rows.map((row) => row.table_name);
    } finally {
      await client.end();
    }
  }

  async function compile(
    module: Parameters<typeof Test.createTestingModule>[0]['imports'],
  ): Promise<TestingModule> {
    moduleRef = await Test.createTestingModule({
      imports: [
        AppConfigModule.forRoot(
          validateEnvironment({ DATABASE_URL: url, DATABASE_POOL_SIZE: '3' }),
        ),
        ...(module ?? []),
      ],
    })
      .setLogger({ log() {}, error() {}, warn() {} })
      .compile();
    return moduleRef;
  }

  const connection = async (options: DatabaseConnectionOptions) =>
    (await compile([databaseConnection(options)])).get<DataSource>(
      getDataSourceToken(),
    );

  beforeEach(async () => {
    databases += 1;
    url = await newDatabase(server(), `connection_${databases}`);
  });

  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('migrates, then connects with the one options object, its entities loaded and retries bounded', async () => {
    const dataSource = await connection({ migrate: true });
    expect(dataSource.isInitialized).toBe(true);
    expect(dataSource.options).toMatchObject({
      type: 'postgres',
      url,
      applicationName: 'plant-store',
      poolSize: 3,
      autoLoadEntities: true,
      retryAttempts: 5,
      retryDelay: 2_000,
      manualInitialization: false,
    });
    expect((dataSource.options as { schema?: string }).schema).toBeUndefined();
    expect(await tables()).toEqual([
      'api_tokens',
      'commit_probe',
      'migrations',
      'plants',
    ]);
    expect(
      (await dataSource.query(
        'SELECT name FROM migrations ORDER BY id',
      )) as unknown,
    ).toEqual(PLANT_STORE_MIGRATIONS.map(({ name }) => ({ name })));
  }, 60_000);

  it('connects without migrating when not asked to (the token CLI: a host migrates)', async () => {
    const dataSource = await connection({ migrate: false });
    expect(dataSource.isInitialized).toBe(true);
    expect(await tables()).toEqual([]);
  }, 60_000);

  it('gives the DataSource out unconnected and unmigrated when asked for it later, in the schema asked for', async () => {
    const dataSource = await connection({
      migrate: true,
      later: true,
      schema: 'host',
    });
    expect(dataSource.isInitialized).toBe(false);
    expect(dataSource.options).toMatchObject({
      schema: 'host',
      manualInitialization: true,
    });
    expect(await tables()).toEqual([]);
  }, 60_000);

  it('DatabaseModule: migrates and connects through DatabaseStartup, once asked for', async () => {
    const moduleRef = await compile([DatabaseModule]);
    const startup = moduleRef.get(DatabaseStartup);
    const dataSource = moduleRef.get<DataSource>(getDataSourceToken());
    await startup.started;
    expect(startup.isStarted).toBe(true);
    expect(dataSource.isInitialized).toBe(true);
    expect(await tables()).toEqual([
      'api_tokens',
      'commit_probe',
      'migrations',
      'plants',
    ]);
  }, 60_000);
});
