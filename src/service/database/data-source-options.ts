import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import type { Environment } from '../config/environment.js';
import { PLANT_STORE_MIGRATIONS } from '../../lib/index.js';

export type DatabaseSettings = Pick<
  Environment,
  | 'DATABASE_POOL_SIZE'
  | 'DATABASE_CONNECT_TIMEOUT_MS'
  | 'DATABASE_QUERY_TIMEOUT_MS'
>;

/** The one TypeORM options object (service and migrations), every wait bounded: connect, statement, answer. */
export function dataSourceOptions(
  url: string,
  settings: DatabaseSettings,
): PostgresDataSourceOptions {
  return {
    type: 'postgres',
    url,
    applicationName: 'plant-store',
    synchronize: false,
    migrationsRun: false,
    migrations: PLANT_STORE_MIGRATIONS,
    logging: ['migration'],
    poolSize: settings.DATABASE_POOL_SIZE,
    connectTimeoutMS: settings.DATABASE_CONNECT_TIMEOUT_MS,
    extra: {
      statement_timeout: settings.DATABASE_QUERY_TIMEOUT_MS,
      query_timeout: settings.DATABASE_QUERY_TIMEOUT_MS + 1_000,
      keepAlive: true,
    },
  };
}
