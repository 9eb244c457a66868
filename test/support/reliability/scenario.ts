import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ListeningService,
  type ServiceProcess,
  spawnService as spawnServiceProcess,
  startReady,
  untilReady,
} from '../service-process.js';
import { type OwnPostgres, useOwnPostgres } from '../own-postgres.js';
import type { TestPostgres } from '../test-postgres.js';
import { TOKEN } from '../tokens.js';
import { Ledger } from './ledger.js';
import { sendPlant } from './load.js';

export { TOKEN, type TestPostgres, untilReady };

export interface RunningService {
  process: ServiceProcess;
  port: number;
  url: string;
}

// The scenarios' services print warnings and errors only; they are named `process` here.
const quiet = (settings: Record<string, string>) => ({
  LOG_LEVEL: 'warn',
  ...settings,
});
const asRunning = ({
  service,
  port,
  url,
}: ListeningService): RunningService => ({
  process: service,
  port,
  url,
});

/** The built service as a process on `databaseUrl`, answering once this resolves. */
export async function startService(
  databaseUrl: string,
  settings: Record<string, string> = {},
  port?: number,
): Promise<RunningService> {
  return asRunning(await startReady(databaseUrl, quiet(settings), port));
}

/** The same, resolving as soon as the process is spawned (untilReady awaits the rest). */
export async function spawnService(
  databaseUrl: string,
  settings: Record<string, string> = {},
  port?: number,
): Promise<RunningService> {
  return asRunning(
    await spawnServiceProcess(databaseUrl, quiet(settings), port),
  );
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
