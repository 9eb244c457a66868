import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DATABASE_STARTED_MESSAGE } from '../database/database-started-message.js';
import { embeddedDatabaseUrl } from '../database/embedded-database-url.js';
import { SERVICE_V8_FLAGS } from '../v8-flags.js';
import { KeeperProcess } from './database-keeper-process.js';
import { freePort } from './free-port.js';
import { removeStaleStores } from './stale-stores.js';
import {
  DatabaseFaults,
  embeddedDatabase,
  NoFaults,
  type StoreFaults,
} from './store-faults.js';
import { STORE_PREFIX } from './store-folder.js';
import { createStoreDatabase } from './store-database.js';
import { StoreConnection } from './store-reset.js';
import { ManagedTokens, type StoreTokens } from './store-tokens.js';
import {
  defaultCacheDir,
  makeCacheDir,
  PASSWORD_FILE,
  templateCluster,
} from './template-cluster.js';
import { TEST_INSTANCE_SETTINGS, testInstanceToken } from './test-instance.js';

export interface PlantStoreOptions {
  /** Service settings (docs/configuration.md) over the ones this sets; the caller's env never reaches it. */
  env?: Record<string, string>;
  /** An external PostgreSQL (its database name must be the suite's to lose); unset: embedded. */
  databaseUrl?: string;
  /** A run's shared PostgreSQL (startSharedPostgres().url): the store gets a database of its own on it. */
  sharedPostgres?: string;
  /** A per-token request limit (TOKEN_RATE_LIMIT): past it, 429 with Retry-After. */
  rateLimit?: { requests: number; windowMs?: number };
  /** Load shedding's limits (CREATE_CONCURRENCY_LIMIT, CREATE_WAITING_LIMIT): past both, 503. */
  admission?: { concurrency: number; waiting?: number };
  /** Where the template cluster is kept; by default plant-store-cache-<uid> in the temporary directory. */
  cacheDir?: string;
  /** How long the start may take, database included; 60 s by default. */
  startTimeoutMs?: number;
  /** Every line the service prints; by default kept, and shown only when the start fails. */
  onOutput?: (text: string) => void;
}

export interface RunningPlantStore {
  /** The service's root, `http://127.0.0.1:<port>`. */
  url: string;
  /** A bearer token the service accepts. */
  token: string;
  /** Its database: the embedded one's URL, or the `databaseUrl` given. */
  databaseUrl: string;
  /** What /health reports as `instance`: this instance's, checked before the start resolves. */
  instanceId: string;
  /** Empties the plants; the service, its token and managed tokens stay. */
  reset(): Promise<void>;
  /** Managed tokens, through the token store the service keeps current. */
  tokens: StoreTokens;
  /** Real failures on demand: the database stopped from answering. */
  faults: StoreFaults;
  /** Drains, stops the service and its embedded PostgreSQL, removes the data folder. */
  stop(): Promise<void>;
}

/** The service as scripts/bundle-service.mjs packs it: the same code, a few files to load. */
const MAIN = fileURLToPath(
  new URL('../../service-bundle/main.mjs', import.meta.url),
);
const STOP_DEADLINE_MS = 30_000;
/** Tries with fresh ports when the ones picked were taken in the meantime (EADDRINUSE). */
const PORT_ATTEMPTS = 3;
const PORT_TAKEN = /EADDRINUSE|is the port in use|Address already in use/;

/** A process of the run's own, on loopback: the suite's address is the only one. */
const TESTING_SETTINGS = {
  ...TEST_INSTANCE_SETTINGS,
  NODE_ENV: 'test',
  LOG_FORMAT: 'json',
  HOST: '127.0.0.1',
  SHUTDOWN_TIMEOUT_MS: '5000',
  // The pipe this process holds: its death, even by SIGKILL, stops the service.
  STOP_WHEN_STDIN_CLOSES: 'true',
};

function limitSettings(options: PlantStoreOptions): Record<string, string> {
  const { rateLimit, admission } = options;
  return {
    ...(rateLimit && {
      TOKEN_RATE_LIMIT: String(rateLimit.requests),
      ...(rateLimit.windowMs !== undefined && {
        TOKEN_RATE_WINDOW_MS: String(rateLimit.windowMs),
      }),
    }),
    ...(admission && {
      CREATE_CONCURRENCY_LIMIT: String(admission.concurrency),
      CREATE_WAITING_LIMIT: String(admission.waiting ?? 0),
    }),
  };
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (!isRunning(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
  await exited;
  clearTimeout(timer);
}

async function readyInstance(url: string): Promise<string | undefined> {
  try {
    const answer = await fetch(`${url}/health/ready`);
    if (answer.status !== 200) return undefined;
    return ((await answer.json()) as { instance?: string }).instance;
  } catch {
    return undefined;
  }
}

class StartFailed extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

interface ServiceStart {
  dataDir: string;
  databaseUrl: string;
  cacheDir: string;
  /** Settles when the database fails to start: the service will not become ready. */
  database?: Promise<void>;
  onSpawn?: (pid: number) => void;
}

/** How many workers' ready lines the start waits for: 0 for one process, whose readiness says it. */
function workersToCount(env: PlantStoreOptions['env']): number {
  const workers = Number(env?.WEB_CONCURRENCY ?? 1);
  if (!(workers > 1)) return 0;
  if (['fatal', 'error', 'warn'].includes(env?.LOG_LEVEL ?? 'log'))
    throw new Error(
      'startPlantStore: WEB_CONCURRENCY above 1 needs LOG_LEVEL log (the default) or lower: ' +
        "the start counts each worker's ready line.",
    );
  return workers;
}

async function startService(
  options: PlantStoreOptions,
  start: ServiceStart,
): Promise<{
  child: ChildProcess;
  url: string;
  token: string;
  instanceId: string;
}> {
  const workers = workersToCount(options.env);
  await access(MAIN).catch(() => {
    throw new Error(
      `startPlantStore: ${MAIN} is missing: \`npm run build\` makes it (nest build, then scripts/bundle-service.mjs).`,
    );
  });
  const port = await freePort();
  const token = testInstanceToken();
  const instanceId = randomUUID();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, [...SERVICE_V8_FLAGS, MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_COMPILE_CACHE: join(start.cacheDir, 'node-compile-cache'),
      ...TESTING_SETTINGS,
      DATA_DIR: start.dataDir,
      PORT: String(port),
      API_TOKENS: token,
      INSTANCE_ID: instanceId,
      DATABASE_URL: start.databaseUrl,
      ...limitSettings(options),
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) start.onSpawn?.(child.pid);
  const onOutput = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output += text;
    options.onOutput?.(text);
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  // A runner that forgets stop(): its exit closes the pipe, and the service stops itself.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();

  let databaseFailure: Error | undefined;
  start.database?.catch(
    (error: unknown) =>
      (databaseFailure =
        error instanceof Error ? error : new Error(JSON.stringify(error))),
  );
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  // Each WEB_CONCURRENCY worker answers for itself: ready once each has logged so.
  const allStarted = (): boolean =>
    workers === 0 || output.split(DATABASE_STARTED_MESSAGE).length > workers;
  // Readiness of this instance: another one left on the port would answer 200 too.
  while ((await readyInstance(url)) !== instanceId || !allStarted()) {
    if (
      !isRunning(child) ||
      databaseFailure !== undefined ||
      Date.now() > deadline
    ) {
      // Said before the stop, after which it never runs.
      const why =
        databaseFailure !== undefined
          ? databaseFailure.message
          : isRunning(child)
            ? 'timed out'
            : `exited ${child.exitCode ?? child.signalCode}`;
      await stopProcess(child);
      throw new StartFailed(
        `Plant Store did not become ready at ${url} (${why}). It printed:\n${output}`,
        PORT_TAKEN.test(output) ||
          PORT_TAKEN.test(databaseFailure?.message ?? ''),
      );
    }
    await sleep(20);
  }
  return { child, url, token, instanceId };
}

/** The store's own PostgreSQL, copied from the template, started beside the service. */
async function startEmbedded(
  options: PlantStoreOptions,
  cacheDir: string,
): Promise<RunningPlantStore> {
  const template = await templateCluster(cacheDir);
  const password = (
    await readFile(join(template, PASSWORD_FILE), 'utf8')
  ).trim();
  const dataDir = await mkdtemp(join(tmpdir(), STORE_PREFIX));
  const databaseUrl = embeddedDatabaseUrl(password, await freePort());
  const keeper = new KeeperProcess({
    template,
    dataDir,
    port: Number(new URL(databaseUrl).port),
  });
  try {
    // At once: the database is up long before the service has loaded its modules.
    const service = await startService(options, {
      dataDir,
      databaseUrl,
      cacheDir,
      database: keeper.ready,
      // From the start: a runner gone mid-start leaves the keeper to kill the service first.
      onSpawn: (pid) => keeper.watch(pid),
    });
    keeper.serving();
    const faults = new DatabaseFaults(embeddedDatabase(dataDir));
    return storeOf(service, databaseUrl, faults, async () => {
      await faults.end();
      await stopProcess(service.child);
      await keeper.stop();
    });
  } catch (error) {
    await keeper.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

async function startOnExternal(
  options: PlantStoreOptions & { databaseUrl: string },
  cacheDir: string,
): Promise<RunningPlantStore> {
  const dataDir = await mkdtemp(join(tmpdir(), STORE_PREFIX));
  const removeDataDir = (): Promise<void> =>
    rm(dataDir, { recursive: true, force: true });
  try {
    const service = await startService(options, {
      dataDir,
      databaseUrl: options.databaseUrl,
      cacheDir,
    });
    return storeOf(service, options.databaseUrl, new NoFaults(), async () => {
      await stopProcess(service.child);
      await removeDataDir();
    });
  } catch (error) {
    await removeDataDir();
    throw error;
  }
}

/** A database of its own on the run's shared server, dropped when the store stops. */
async function startOnShared(
  serverUrl: string,
  options: PlantStoreOptions,
  cacheDir: string,
): Promise<RunningPlantStore> {
  const database = await createStoreDatabase(serverUrl);
  try {
    const store = await startOnExternal(
      { ...options, databaseUrl: database.url },
      cacheDir,
    );
    return { ...store, stop: () => store.stop().then(() => database.drop()) };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

function storeOf(
  service: { url: string; token: string; instanceId: string },
  databaseUrl: string,
  faults: StoreFaults,
  stopAll: () => Promise<void>,
): RunningPlantStore {
  const connection = new StoreConnection(databaseUrl);
  const tokens = new ManagedTokens(databaseUrl, service.url);
  let stopped: Promise<void> | undefined;
  return {
    url: service.url,
    token: service.token,
    databaseUrl,
    instanceId: service.instanceId,
    reset: () => connection.reset(),
    tokens,
    faults,
    stop: () =>
      (stopped ??= Promise.all([connection.close(), tokens.close()]).then(
        stopAll,
      )),
  };
}

/** Starts the built service for a test run; resolves once this instance is ready (docs/testing-against-plant-store.md). */
export async function startPlantStore(
  options: PlantStoreOptions = {},
): Promise<RunningPlantStore> {
  // A setting it cannot work with refuses the start before anything is made.
  workersToCount(options.env);
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  await makeCacheDir(cacheDir);
  const sweep = removeStaleStores(cacheDir);
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        if (options.sharedPostgres !== undefined)
          return await startOnShared(options.sharedPostgres, options, cacheDir);
        return options.databaseUrl === undefined
          ? await startEmbedded(options, cacheDir)
          : await startOnExternal(
              { ...options, databaseUrl: options.databaseUrl },
              cacheDir,
            );
      } catch (error) {
        if (
          !(error instanceof StartFailed) ||
          !error.portTaken ||
          attempt >= PORT_ATTEMPTS
        )
          throw error;
      }
    }
  } finally {
    await sweep;
  }
}
