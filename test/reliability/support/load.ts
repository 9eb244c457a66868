import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Ledger, Outcome } from './ledger.js';

let sequence = 0n;
const base = 3n * 2n ** 60n + BigInt(process.pid) * 2n ** 36n;

/** A fresh id above 2^53, so a rounding anywhere on the way would show as a lost plant. */
export function nextId(): bigint {
  sequence += 1n;
  return base + sequence;
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
    let parsed: unknown = answer.text;
    try {
      parsed = JSON.parse(answer.text);
    } catch {
      // Kept as text: a non-JSON body is itself a finding.
    }
    const outcome: Outcome = {
      kind: 'answered',
      status: answer.status,
      body: parsed,
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

interface PendingRequest {
  id: bigint;
  name: string;
  at: number;
  started: number;
  timer: NodeJS.Timeout;
}

/** One keep-alive connection of the open loop, carrying one request at a time. */
class LoadConnection {
  readonly socket: Socket;
  readonly connected: Promise<unknown>;
  private received = '';
  private pending: PendingRequest | undefined;
  private probing: (() => void) | undefined;

  constructor(
    port: number,
    hostname: string,
    private readonly head: string,
    private readonly events: {
      settled(request: PendingRequest, outcome: Outcome): void;
      reusable(connection: LoadConnection): void;
      gone(connection: LoadConnection): void;
    },
  ) {
    this.socket = connect(port, hostname);
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    // Only the pool opened up front waits on it; a later failure shows as "no answer".
    this.connected.catch(() => undefined);
    this.socket.setNoDelay(true);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => {
      this.received += chunk;
      this.answered();
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) =>
      this.lost(error.code ?? String(error)),
    );
    this.socket.on('close', () => this.lost('CLOSED'));
  }

  /**
   * Resolves once the service answered a `GET /health/live` on it: the service accepted the
   * connection (a client's handshake completes in the kernel even when the service's accept
   * queue is full, and a request on it may then wait for long).
   */
  async probe(host: string): Promise<void> {
    await this.connected;
    await new Promise<void>((resolve) => {
      this.probing = resolve;
      this.socket.write(`GET /health/live HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    });
  }

  send(request: PendingRequest, body: string): void {
    this.pending = request;
    this.socket.write(`${this.head}${body.length}\r\n\r\n${body}`);
  }

  /** Settles the request once its whole answer is in. */
  private answered(): void {
    const end = this.received.indexOf('\r\n\r\n');
    const request = this.pending;
    if (end === -1 || (request === undefined && this.probing === undefined))
      return;
    const headers = this.received.slice(0, end);
    const length = Number(
      /\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0,
    );
    if (this.received.length < end + 4 + length) return;
    const text = this.received.slice(end + 4, end + 4 + length);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Kept as text: a non-JSON body is itself a finding.
    }
    this.pending = undefined;
    this.received = '';
    if (request === undefined) {
      this.probing?.();
      this.probing = undefined;
      return;
    }
    if (/\r\nconnection: *close/i.test(headers)) this.socket.destroy();
    else this.events.reusable(this);
    this.events.settled(request, {
      kind: 'answered',
      status: Number(headers.slice(9, 12)),
      body,
      ms: performance.now() - request.started,
    });
  }

  private lost(error: string): void {
    this.events.gone(this);
    const request = this.pending;
    if (request === undefined) return;
    this.pending = undefined;
    this.events.settled(request, {
      kind: 'no-answer',
      error,
      ms: performance.now() - request.started,
    });
  }
}

/**
 * An open loop: requests at a constant arrival rate for `durationMs`, whether or not earlier
 * ones were answered (as with real users), over a pool of `maxConnections` keep-alive
 * connections, as a load balancer in front of the service holds them: a request due while
 * all are busy waits for one (a closed one is replaced), and its time is counted from when
 * it was due. Written on raw sockets: at twice a service's capacity, a client built on
 * node:http would need more of the shared CPU than the service, and measure itself.
 * Resolves once every request has its outcome in the ledger.
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
  const { hostname, port, host } = new URL(baseUrl);
  const head = `POST /plants HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: `;
  const idle: LoadConnection[] = [];
  const open = new Set<LoadConnection>();
  /** Due requests waiting for a connection: when each was due (performance.now()). */
  const waiting: number[] = [];
  let nextWaiting = 0;
  const figures: OpenLoadFigures = { planned: 0, maxLagMs: 0, connections: 0 };
  let outstanding = 0;
  let allSent = false;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));

  const settle = (
    request: Pick<PendingRequest, 'id' | 'name' | 'at'>,
    outcome: Outcome,
  ): void => {
    ledger.record({
      id: request.id,
      name: request.name,
      at: request.at,
      outcome,
    });
    outstanding -= 1;
    if (allSent && outstanding === 0) done();
  };
  const events = {
    settled(request: PendingRequest, outcome: Outcome): void {
      clearTimeout(request.timer);
      settle(request, outcome);
    },
    reusable(connection: LoadConnection): void {
      idle.push(connection);
      dispatch();
    },
    gone(connection: LoadConnection): void {
      open.delete(connection);
      const at = idle.indexOf(connection);
      if (at !== -1) idle.splice(at, 1);
      dispatch();
    },
  };

  const sendOn = (connection: LoadConnection, dueAt: number): void => {
    const id = nextId();
    const name = `Plant ${id} open loop`;
    const at = ledger.now() - (performance.now() - dueAt);
    const left = timeoutMs - (performance.now() - dueAt);
    if (left <= 0) {
      idle.push(connection);
      settle(
        { id, name, at },
        { kind: 'no-answer', error: 'TIMEOUT', ms: timeoutMs },
      );
      return;
    }
    const { socket } = connection;
    connection.send(
      {
        id,
        name,
        at,
        started: dueAt,
        timer: setTimeout(
          () =>
            socket.destroy(
              Object.assign(new Error('timed out'), { code: 'TIMEOUT' }),
            ),
          left,
        ),
      },
      `{"id": ${id}, "name": ${JSON.stringify(name)}}`,
    );
  };
  const dispatch = (): void => {
    while (nextWaiting < waiting.length) {
      let connection = idle.pop();
      if (connection === undefined) {
        if (open.size >= maxConnections) return;
        connection = new LoadConnection(Number(port), hostname, head, events);
        open.add(connection);
        figures.connections += 1;
      }
      sendOn(connection, waiting[nextWaiting]);
      nextWaiting += 1;
    }
  };

  // Opened before the clock starts, as a balancer's pool is: the first second of the
  // schedule should not measure a thousand handshakes at once (and the listen backlog).
  const pool = Array.from(
    { length: maxConnections },
    () => new LoadConnection(Number(port), hostname, head, events),
  );
  await Promise.all(pool.map((connection) => connection.probe(host)));
  for (const connection of pool) open.add(connection);
  idle.push(...pool);
  figures.connections = pool.length;

  const started = performance.now();
  figures.planned = Math.floor((durationMs * rate) / 1000);
  let scheduled = 0;
  while (scheduled < figures.planned) {
    const now = performance.now();
    const due = Math.min(
      figures.planned,
      Math.floor(((now - started) * rate) / 1000),
    );
    for (; scheduled < due; scheduled += 1) {
      const dueAt = started + (scheduled * 1000) / rate;
      figures.maxLagMs = Math.max(figures.maxLagMs, now - dueAt);
      waiting.push(dueAt);
      outstanding += 1;
    }
    dispatch();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  allSent = true;
  if (outstanding > 0) await finished;
  for (const connection of open) connection.socket.destroy();
  return figures;
}
