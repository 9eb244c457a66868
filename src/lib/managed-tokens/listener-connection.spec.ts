import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { listenerClientConfig } from './listener-connection.js';

const options = (more: Partial<PostgresDataSourceOptions>) =>
  ({ type: 'postgres', ...more }) as PostgresDataSourceOptions;

describe('listenerClientConfig', () => {
  it("takes the DataSource's credentials, ssl and extra, as TypeORM's pool does", () => {
    const config = listenerClientConfig(
      options({
        url: 'postgresql://shop@db.internal/shop',
        ssl: { rejectUnauthorized: true, ca: 'CA' },
        connectTimeoutMS: 3_000,
        applicationName: 'shop',
        extra: { statement_timeout: 1_500, keepAliveInitialDelayMillis: 7 },
      }),
      5_000,
    );
    expect(config).toEqual({
      connectionString: 'postgresql://shop@db.internal/shop',
      ssl: { rejectUnauthorized: true, ca: 'CA' },
      connectionTimeoutMillis: 3_000,
      statement_timeout: 1_500,
      keepAliveInitialDelayMillis: 7,
      query_timeout: 5_000,
      application_name: 'shop-token-sync',
      keepAlive: true,
    });
  });

  it("lets extra set what TypeORM's pool lets it set, and keeps the listener's query timeout", () => {
    const config = listenerClientConfig(
      options({
        host: 'db',
        applicationName: 'shop',
        extra: {
          application_name: 'shop-eu',
          connectionTimeoutMillis: 900,
          query_timeout: 60_000,
        },
      }),
      5_000,
    );
    expect(config).toMatchObject({
      host: 'db',
      application_name: 'shop-eu-token-sync',
      connectionTimeoutMillis: 900,
      query_timeout: 5_000,
    });
  });

  it('puts the schema first on the search_path, after the startup options extra gives', () => {
    expect(
      listenerClientConfig(
        options({
          schema: 'my shop',
          extra: { options: '-c lock_timeout=100' },
        }),
        5_000,
      ).options,
    ).toBe('-c lock_timeout=100 -c search_path="my\\ shop"');
    expect(
      listenerClientConfig(options({ host: 'db' }), 5_000).options,
    ).toBeUndefined();
  });

  it('connects to the primary of a DataSource with replicas, with a bounded connect by default', () => {
    const config = listenerClientConfig(
      options({
        replication: {
          master: { host: 'primary', username: 'shop', password: 'pw' },
          slaves: [{ host: 'replica' }],
        },
      }),
      5_000,
    );
    expect(config).toMatchObject({
      host: 'primary',
      user: 'shop',
      password: 'pw',
      connectionTimeoutMillis: 10_000,
      application_name: 'plant-store-token-sync',
    });
  });
});
