import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import {
  embeddedDatabaseUrl,
  embeddedPasswordFile,
} from '../database/embedded-database-url.js';
import { freePort } from './free-port.js';
import { TEST_INSTANCE_SETTINGS, testInstanceToken } from './test-instance.js';

export interface PlantStoreOptions {
  /**
   * Settings of the service (docs/configuration.md), over the ones this sets: a test's own
   * `AUTH_FAILURE_LIMIT`, say. Nothing of the caller's process.env reaches the service.
   */
  env?: Record<string, string>;
  /** An external PostgreSQL (its database name must be the suite's to lose); unset: embedded. */
  databaseUrl?: string;
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
  /** Drains, stops the service and its embedded PostgreSQL, removes the data folder. */
  stop(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const STOP_DEADLINE_MS = 30_000;
/** Tries with fresh ports when the ones picked were taken in the meantime (EADDRINUSE). */
const PORT_ATTEMPTS = 3;

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

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM (a drain, then the embedded PostgreSQL stopped), SIGKILL past the deadline. */
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

async function startOnce(
  options: PlantStoreOptions,
  dataDir: string,
): Promise<RunningPlantStore> {
  const port = await freePort();
  const databasePort = await freePort();
  const token = testInstanceToken();
  const instanceId = randomUUID();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      ...TESTING_SETTINGS,
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_DATABASE_PORT: String(databasePort),
      API_TOKENS: token,
      INSTANCE_ID: instanceId,
      ...(options.databaseUrl === undefined
        ? {}
        : { DATABASE_URL: options.databaseUrl }),
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const onOutput = (chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    output += text;
    options.onOutput?.(text);
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  // A runner that forgets stop() is not held open by the service: its exit closes the
  // pipe, and the service stops itself.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  // Readiness of this instance: another one left on the port would answer 200 too.
  while ((await readyInstance(url)) !== instanceId) {
    if (!isRunning(child) || Date.now() > deadline) {
      await stopProcess(child);
      throw new StartFailed(
        `Plant Store did not become ready at ${url} ` +
          `(${isRunning(child) ? 'timed out' : `exited ${child.exitCode ?? child.signalCode}`}). It printed:\n${output}`,
        /EADDRINUSE|is the port in use/.test(output),
      );
    }
    await sleep(50);
  }

  const databaseUrl =
    options.databaseUrl ??
    embeddedDatabaseUrl(
      (await readFile(embeddedPasswordFile(dataDir), 'utf8')).trim(),
      databasePort,
    );
  let stopped: Promise<void> | undefined;
  return {
    url,
    token,
    databaseUrl,
    instanceId,
    stop: () => (stopped ??= stopProcess(child)),
  };
}

/**
 * Starts the built service (this package's dist/service/main.js) for a test run: on its embedded
 * PostgreSQL in a fresh data folder (or `databaseUrl`), on free ports below the ephemeral
 * range, with a token of its own, and resolves once this very instance is ready. Made for
 * a Vitest or Jest globalSetup: docs/testing-against-plant-store.md.
 */
export async function startPlantStore(
  options: PlantStoreOptions = {},
): Promise<RunningPlantStore> {
  for (let attempt = 1; ; attempt += 1) {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-test-'));
    const removeDataDir = (): Promise<void> =>
      rm(dataDir, { recursive: true, force: true });
    try {
      const running = await startOnce(options, dataDir);
      return {
        ...running,
        stop: () => running.stop().then(removeDataDir),
      };
    } catch (error) {
      await removeDataDir();
      if (
        !(error instanceof StartFailed) ||
        !error.portTaken ||
        attempt >= PORT_ATTEMPTS
      )
        throw error;
    }
  }
}
