import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { TOKEN_SYNC_APPLICATION_NAME } from './active-tokens.store.js';

/** pg waits for ever by default: a connection that never opens must fail and be retried. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** `-c search_path=<schema>` as a startup option: a space or backslash is escaped there. */
function searchPathOption(schema: string): string {
  return `-c search_path=${pg.escapeIdentifier(schema).replace(/[\\ ]/g, '\\$&')}`;
}

/** The listener's settings as TypeORM builds its pool's, plus a query timeout, the schema and a name. */
export function listenerClientConfig(
  options: PostgresDataSourceOptions,
  queryTimeoutMs: number,
): pg.ClientConfig {
  const credentials = options.replication?.master ?? options;
  const config: pg.ClientConfig = {
    connectionString: credentials.url,
    host: credentials.host,
    port: credentials.port,
    user: credentials.username,
    password: credentials.password,
    database: credentials.database,
    ssl: credentials.ssl as pg.ClientConfig['ssl'],
    connectionTimeoutMillis: options.connectTimeoutMS,
    application_name: options.applicationName ?? credentials.applicationName,
    ...(options.extra as pg.ClientConfig | undefined),
  };
  const startupOptions = [
    config.options,
    options.schema ? searchPathOption(options.schema) : undefined,
  ].filter((option) => option !== undefined && option !== '');
  return {
    ...config,
    connectionTimeoutMillis:
      config.connectionTimeoutMillis ?? DEFAULT_CONNECT_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
    application_name:
      config.application_name === undefined
        ? TOKEN_SYNC_APPLICATION_NAME
        : `${config.application_name}-token-sync`,
    keepAlive: true,
    ...(startupOptions.length > 0 && { options: startupOptions.join(' ') }),
  };
}

/** A pg.Client outside the pool: it stays busy listening for the life of the process. */
export function listenerConnection(
  dataSource: DataSource,
  queryTimeoutMs: number,
): () => pg.Client {
  const config = listenerClientConfig(
    dataSource.options as PostgresDataSourceOptions,
    queryTimeoutMs,
  );
  return () => new pg.Client(config);
}
