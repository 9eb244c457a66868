import { PLANT_STORE_MIGRATIONS } from '../../lib/index.js';
import { dataSourceOptions } from './data-source-options.js';

describe('dataSourceOptions: the one TypeORM options object, every wait bounded', () => {
  it('takes the schema from the migrations alone, and bounds connect, statement and answer', () => {
    expect(
      dataSourceOptions('postgres://u@h/db', {
        DATABASE_POOL_SIZE: 7,
        DATABASE_CONNECT_TIMEOUT_MS: 1_500,
        DATABASE_QUERY_TIMEOUT_MS: 4_000,
      }),
    ).toEqual({
      type: 'postgres',
      url: 'postgres://u@h/db',
      applicationName: 'plant-store',
      synchronize: false,
      migrationsRun: false,
      migrations: PLANT_STORE_MIGRATIONS,
      logging: ['migration'],
      poolSize: 7,
      connectTimeoutMS: 1_500,
      // The server's statement timeout first; the client's a second later, for an answer lost.
      extra: {
        statement_timeout: 4_000,
        query_timeout: 5_000,
        keepAlive: true,
      },
    });
  });
});
