import { Agent, request } from 'node:http';
import { TOKEN } from '../tokens.js';
import { Ledger, type Outcome } from './ledger.js';

let sequence = 0n;
const base = 3n * 2n ** 60n + BigInt(process.pid) * 2n ** 36n;

/** A fresh id above 2^53, so a rounding anywhere on the way would show as a lost plant. */
export function nextId(): bigint {
  sequence += 1n;
  return base + sequence;
}

/** The first of `count` fresh ids in a row, for a client that numbers its own from it. */
export function nextIds(count: bigint): bigint {
  const first = base + sequence + 1n;
  sequence += count;
  return first;
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

/**
 * A fresh ledger for `scenario`, and closed-loop clients (startLoad) creating plants with
 * the test token, each attempt in that ledger.
 */
export function startLedgeredLoad(
  scenario: string,
  options: Omit<LoadOptions, 'token' | 'ledger'>,
): { ledger: Ledger; load: RunningLoad } {
  const ledger = new Ledger(scenario);
  return { ledger, load: startLoad({ ...options, token: TOKEN, ledger }) };
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
