import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../../test-kit/free-port.mjs';
import { ServiceProcess } from '../service-process.js';
import { type OwnPostgres, useOwnPostgres } from '../own-postgres.js';
import type { TestPostgres } from '../test-postgres.js';
import { TEST_TOKENS, TOKEN } from '../tokens.js';
import { Ledger } from './ledger.js';
import { sendPlant } from './load.js';

export { TOKEN, type TestPostgres };

export interface RunningService {
  process: ServiceProcess;
  port: number;
  url: string;
}

/** The built service as a process on `databaseUrl`, answering once this resolves. */
export async function startService(
  databaseUrl: string,
  settings: Record<string, string> = {},
  port?: number,
): Promise<RunningService> {
  const service = await spawnService(databaseUrl, settings, port);
  await untilReady(service.process, service.url);
  return service;
}

/** The same, resolving as soon as the process is spawned (untilReady awaits the rest). */
export async function spawnService(
  databaseUrl: string,
  settings: Record<string, string> = {},
  port?: number,
): Promise<RunningService> {
  const chosen = port ?? (await freePort());
  const service = ServiceProcess.start({
    DATABASE_URL: databaseUrl,
    API_TOKENS: TEST_TOKENS.join(','),
    PORT: String(chosen),
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
    ...settings,
  });
  return { process: service, port: chosen, url: `http://127.0.0.1:${chosen}` };
}

/** A PostgreSQL of its own for a describe block (test/support/own-postgres.ts). */
export function useTestPostgres(
  name: string,
  lifetime: { each?: boolean } = {},
): { readonly postgres: TestPostgres } {
  return useOwnPostgres<never>(name, undefined, lifetime);
}

/** The same with the built service on it, as a process (startService with `settings`). */
export function useServiceOnTestPostgres(
  name: string,
  settings: Record<string, string> = {},
  lifetime: { each?: boolean } = {},
): OwnPostgres<RunningService> {
  return useOwnPostgres(
    name,
    {
      start: (url) => startService(url, settings),
      stop: (service) => service.process.stop(),
    },
    lifetime,
  );
}

/** Until GET /health/ready answers 200: polled every 100 ms, `attempts` times at most. */
export async function untilReady(
  service: ServiceProcess,
  url: string,
  attempts = 300,
): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (!service.isRunning)
      throw new Error(`The service exited while starting:\n${service.text}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return;
    await sleep(100);
  }
  throw new Error(`The service never became ready:\n${service.text}`);
}

/**
 * Invariant 4: after a fault ends, the service answers 200 again within `withinMs`, with no
 * restart by hand. Returns how long it took.
 */
export async function recoveryTime(
  url: string,
  withinMs = 10_000,
): Promise<number> {
  const ledger = new Ledger('recovery probe');
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    const id =
      BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000));
    await sendPlant({
      baseUrl: url,
      token: TOKEN,
      ledger,
      id,
      name: 'Recovery probe',
      timeoutMs: 3_000,
    });
    const last = ledger.attempts.at(-1)?.outcome;
    if (last?.kind === 'answered' && last.status === 200)
      return Date.now() - started;
    await sleep(100);
  }
  // What the last probes got instead, so that a failure says where recovery stuck.
  const lastOutcomes = ledger.attempts
    .slice(-3)
    .map(({ outcome }) => JSON.stringify(outcome));
  throw new Error(
    `The service did not answer 200 within ${withinMs} ms of the fault ending; the last probes got: ${lastOutcomes.join(', ')}`,
  );
}
