import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Ledger } from './ledger.js';

const run = promisify(execFile);
const SOURCES = resolve('test/support/reliability/load-generator');

/**
 * The cores of a 2-core machine, as issue 20 measures overload: the generator alone on one,
 * the service and its PostgreSQL on the other, as if the clients were another machine.
 */
export const GENERATOR_CPU = 0;
export const SERVICE_CPU = 1;

/** What the generator prints when it is done (load-generator/load-generator.c). */
export interface GeneratorSummary {
  mode: 'open' | 'closed';
  requests: number;
  answered: number;
  ok: number;
  /** 200s answered before the end of --duration-ms: a closed loop's creates. */
  okInWindow: number;
  refused: number;
  refusedWithoutRetryAfter: number;
  otherStatus: number;
  /** No answer within the timeout of being due. */
  unanswered: number;
  reset: number;
  closed: number;
  connectFailed: number;
  connectionsOpened: number;
  peakConnections: number;
  durationMs: number;
  lastSentMs: number;
  maxLatenessMs: number;
  finishedMs: number;
}

/** One request: when it was due, how late it went out, and what came back how long after it was due. */
export interface RequestOutcome {
  id: bigint;
  dueMs: number;
  latenessMs: number;
  status: number;
  retryAfter: boolean;
  latencyMs: number;
  outcome:
    | 'answered'
    | 'unanswered'
    | 'reset'
    | 'closed'
    | 'connect-failed'
    | 'pending';
}

export interface GeneratorRun {
  summary: GeneratorSummary;
  requests: RequestOutcome[];
}

export interface LoadGenerator {
  /** Runs the generator pinned to GENERATOR_CPU (recordInLedger puts its requests in a ledger). */
  run(
    mode: 'open' | 'closed',
    options: {
      port: number;
      token: string;
      durationMs: number;
      rate?: number;
      connections?: number;
      maxConnections?: number;
      /** Connections opened, and probed, before the clock starts (a client's pool). */
      preopen?: number;
      firstId: bigint;
    },
  ): Promise<GeneratorRun>;
  /** The instant server (instant-server.c) pinned to SERVICE_CPU on `port`; stop() ends it. */
  startInstantServer(port: number): Promise<{ stop(): Promise<void> }>;
  remove(): Promise<void>;
}

/**
 * Builds the C load generator and the instant server with gcc into a temporary directory
 * (nothing binary is committed), once gcc and taskset are there.
 */
export async function buildLoadGenerator(): Promise<LoadGenerator> {
  // Installs them where missing as root on Debian, or fails saying what to install.
  await run(resolve('.ci/install-load-generator-tools'), [], {
    timeout: 300_000,
  });
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-load-generator-'));
  for (const name of ['load-generator', 'instant-server'])
    await run('gcc', [
      '-O2',
      '-Wall',
      '-Werror',
      '-o',
      join(dir, name),
      join(SOURCES, `${name}.c`),
    ]);
  return {
    async run(mode, options) {
      const outcomes = join(dir, 'outcomes.txt');
      const args = [
        '-c',
        String(GENERATOR_CPU),
        join(dir, 'load-generator'),
        mode,
        '--port',
        String(options.port),
        '--token',
        options.token,
        '--duration-ms',
        String(options.durationMs),
        '--first-id',
        String(options.firstId),
        '--outcomes',
        outcomes,
        ...(options.rate === undefined ? [] : ['--rate', String(options.rate)]),
        ...(options.connections === undefined
          ? []
          : ['--connections', String(options.connections)]),
        ...(options.maxConnections === undefined
          ? []
          : ['--max-connections', String(options.maxConnections)]),
        ...(options.preopen === undefined
          ? []
          : ['--preopen', String(options.preopen)]),
      ];
      const { stdout } = await run('taskset', args, {
        maxBuffer: 1 << 20,
      });
      const summary = JSON.parse(stdout) as GeneratorSummary;
      const requests = (await readFile(outcomes, 'utf8'))
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line): RequestOutcome => {
          const [id, due, lateness, status, retry, latency, outcome] =
            line.split(' ');
          return {
            id: BigInt(id),
            dueMs: Number(due),
            latenessMs: Number(lateness),
            status: Number(status),
            retryAfter: retry === '1',
            latencyMs: Number(latency),
            outcome: outcome as RequestOutcome['outcome'],
          };
        });
      return { summary, requests };
    },
    async startInstantServer(port) {
      const child = spawn(
        'taskset',
        ['-c', String(SERVICE_CPU), join(dir, 'instant-server'), String(port)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((ready, failed) => {
        child.once('error', failed);
        child.once('exit', (code) =>
          failed(new Error(`The instant server exited with ${code}.`)),
        );
        child.stdout.once('data', () => ready());
      });
      return {
        async stop() {
          const exited = new Promise((done) => child.once('exit', done));
          child.kill('SIGKILL');
          await exited;
        },
      };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The plant a generator's request `id` created, as load-generator.c writes its body. */
export const generatedPlant = (id: bigint) => ({
  name: `Plant ${id}`,
  tag: 'load',
});

/** A generator run's requests in `ledger`, for its check against the database. */
export function recordInLedger(ledger: Ledger, { requests }: GeneratorRun) {
  for (const request of requests)
    ledger.record({
      id: request.id,
      ...generatedPlant(request.id),
      at: request.dueMs,
      outcome:
        request.outcome === 'answered'
          ? {
              kind: 'answered',
              status: request.status,
              body: undefined,
              ms: request.latencyMs,
            }
          : {
              kind: 'no-answer',
              error: request.outcome,
              ms: request.latencyMs,
            },
    });
}
