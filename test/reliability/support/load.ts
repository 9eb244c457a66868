import { Agent, request } from 'node:http';
import { openLoop } from '../../../test-kit/open-loop.mjs';
import type { Ledger, Outcome } from './ledger.js';

let sequence = 0n;
const base = 3n * 2n ** 60n + BigInt(process.pid) * 2n ** 36n;

/** A fresh id above 2^53, so a rounding anywhere on the way would show as a lost plant. */
export function nextId(): bigint {
  sequence += 1n;
  return base + sequence;
}

/** An answer's body as JSON, or as text when it is not JSON (itself a finding). */
function parsedBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export interface LoadOptions {
  baseUrl: string | (() => string);
  token: string;
  ledger: Ledger;
  concurrency: number;
  /** Per-request bound: past it the request counts as having no answer. */
  timeoutMs?: number;
  /** Bodies per id; with a function of the worker, several workers may share ids. */
  plantFor?: (id: bigint, worker: number) => { name: string; tag?: string };
  /**
   * A client that got anything but 200 sends the same id and body again after this pause,
   * until it gets a 200 (as a client of an idempotent create should); unset: each request
   * a new plant.
   */
  retryPauseMs?: number;
}

export interface RunningLoad {
  stop(): Promise<void>;
}

/**
 * Closed-loop clients creating plants until stopped, each attempt in the ledger. Connection
 * errors are recorded as "no answer" and the client carries on after a short pause.
 */
export function startLoad({
  baseUrl,
  token,
  ledger,
  concurrency,
  timeoutMs = 10_000,
  plantFor = (id, worker) => ({
    name: `Plant ${id} from ${worker}`,
    tag: id % 2n === 0n ? 'even' : undefined,
  }),
  retryPauseMs,
}: LoadOptions): RunningLoad {
  let running = true;
  const dispatcher = new Agent({ keepAlive: true, maxSockets: concurrency });
  const worker = async (index: number): Promise<void> => {
    while (running) {
      const id = nextId();
      const plant = plantFor(id, index);
      for (;;) {
        const outcome = await sendPlant({
          baseUrl: typeof baseUrl === 'string' ? baseUrl : baseUrl(),
          token,
          ledger,
          dispatcher,
          timeoutMs,
          id,
          ...plant,
        });
        const acknowledged =
          outcome.kind === 'answered' && outcome.status === 200;
        if (acknowledged || retryPauseMs === undefined || !running) break;
        await new Promise((resolve) => setTimeout(resolve, retryPauseMs));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, (_, index) =>
    worker(index),
  );
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      dispatcher.destroy();
    },
  };
}

export interface SendOptions {
  baseUrl: string;
  token: string;
  ledger: Ledger;
  dispatcher?: Agent;
  timeoutMs?: number;
  id: bigint;
  name: string;
  tag?: string;
}

interface RawAnswer {
  status: number;
  text: string;
}

/** One POST /plants over node:http; rejects on a connection error or when it takes too long. */
function post(
  url: string,
  token: string,
  body: string,
  agent: Agent | undefined,
  timeoutMs: number,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          // A body shorter than announced is an answer cut in the middle.
          if (!response.complete)
            reject(
              Object.assign(new Error('truncated answer'), {
                code: 'TRUNCATED',
              }),
            );
          else
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
            });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () =>
      outgoing.destroy(
        Object.assign(new Error('timed out'), { code: 'TIMEOUT' }),
      ),
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

export async function sendPlant({
  baseUrl,
  token,
  ledger,
  dispatcher,
  timeoutMs = 10_000,
  id,
  name,
  tag,
}: SendOptions): Promise<Outcome> {
  const at = ledger.now();
  const started = performance.now();
  const body = `{"id": ${id}, "name": ${JSON.stringify(name)}${tag === undefined ? '' : `, "tag": ${JSON.stringify(tag)}`}}`;
  try {
    const answer = await post(
      `${baseUrl}/plants`,
      token,
      body,
      dispatcher,
      timeoutMs,
    );
    const outcome: Outcome = {
      kind: 'answered',
      status: answer.status,
      body: parsedBody(answer.text),
      ms: performance.now() - started,
    };
    ledger.record({ id, name, tag, at, outcome });
    return outcome;
  } catch (error) {
    const outcome: Outcome = {
      kind: 'no-answer',
      error: (error as { code?: string }).code ?? String(error),
      ms: performance.now() - started,
    };
    ledger.record({ id, name, tag, at, outcome });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return outcome;
  }
}

export interface OpenLoadOptions {
  baseUrl: string;
  token: string;
  ledger: Ledger;
  /** Requests per second, sent on schedule whether or not earlier ones were answered. */
  rate: number;
  durationMs: number;
  /** Past it, a request counts as having no answer and its connection is closed. */
  timeoutMs?: number;
  /** Connections open at once at most, as a load balancer's pool to one replica. */
  maxConnections?: number;
}

export interface OpenLoadFigures {
  /** Requests the schedule called for. */
  planned: number;
  /** The most the generator noticed a request after it was due (ms): its own lag. */
  maxLagMs: number;
  /** Connections opened: the pool, and one more for each the service closed. */
  connections: number;
}

/**
 * An open loop (test-kit/open-loop.mjs): requests at a constant arrival rate for
 * `durationMs`, whether or not earlier ones were answered (as with real users), over a pool
 * of `maxConnections` keep-alive connections opened and probed before the clock starts, and
 * kept while idle, as a load balancer in front of the service holds them: a request due
 * while all are busy waits for one (a closed one is replaced), and its time is counted from
 * when it was due. Raw sockets: at twice a service's capacity, a client built on node:http
 * would need more of the shared CPU than the service, and measure itself. Resolves once
 * every request has its outcome in the ledger.
 */
export async function runOpenLoad({
  baseUrl,
  token,
  ledger,
  rate,
  durationMs,
  timeoutMs = 10_000,
  maxConnections = 2_048,
}: OpenLoadOptions): Promise<OpenLoadFigures> {
  const figures: OpenLoadFigures = {
    planned: Math.floor((durationMs * rate) / 1000),
    maxLagMs: 0,
    connections: 0,
  };
  const { connections } = await openLoop({
    url: baseUrl,
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
    },
    rate,
    count: figures.planned,
    timeoutMs,
    maxConnections,
    // The service keeps idle connections 65 s: closing them early would only bring
    // handshakes into the measured window.
    idleTimeoutMs: Infinity,
    preopenProbe: '/health/live',
    next(_index, dueAt) {
      const lagMs = performance.now() - dueAt;
      figures.maxLagMs = Math.max(figures.maxLagMs, lagMs);
      const id = nextId();
      const name = `Plant ${id} open loop`;
      const at = ledger.now() - lagMs;
      return {
        body: `{"id": ${id}, "name": ${JSON.stringify(name)}}`,
        settle(outcome) {
          ledger.record({
            id,
            name,
            at,
            outcome:
              outcome.error === undefined
                ? {
                    kind: 'answered',
                    status: outcome.status,
                    body: parsedBody(outcome.body),
                    ms: outcome.ms,
                  }
                : { kind: 'no-answer', error: outcome.error, ms: outcome.ms },
          });
        },
      };
    },
  });
  figures.connections = connections;
  return figures;
}
