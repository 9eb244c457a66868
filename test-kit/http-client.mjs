// A lean HTTP/1.1 keep-alive client for the benchmark's open loops. node:http costs several
// times more CPU per request, and on a 2-core machine the generator's CPU is taken from the
// server under test: at a few thousand requests per second node:http alone pushed the
// machine into overload (and measured itself). This one writes each request whole and
// parses only what a server sends back to it: the status line, a Content-Length or chunked
// body, Connection: close. The protocol specs write any bytes and
// watch everything through raw-http.ts instead: another job. Plain JavaScript so the .mjs
// benchmark can import it too; its types are in http-client.d.mts.
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const CRLFCRLF = Buffer.from('\r\n\r\n');
/** Idle connections are closed after this: below Node's default keep-alive timeout (5 s). */
const IDLE_TIMEOUT_MS = 4_000;

const failure = (code, message = code) =>
  Object.assign(new Error(message), { code });

/**
 * Parses one response from `buffer`; undefined while it is incomplete. Returns the status,
 * the body text, how many bytes it used and whether the server closes the connection.
 */
export function parseResponse(buffer) {
  const headEnd = buffer.indexOf(CRLFCRLF);
  if (headEnd < 0) return undefined;
  const head = buffer.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  const bodyStart = headEnd + 4;
  const close = /\r\nconnection:\s*close/i.test(head);
  if (length !== null) {
    const end = bodyStart + Number(length[1]);
    if (buffer.length < end) return undefined;
    return {
      status,
      body: buffer.toString('utf8', bodyStart, end),
      used: end,
      close,
    };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const parts = [];
    let at = bodyStart;
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.toString('latin1', at, lineEnd), 16);
      const dataEnd = lineEnd + 2 + size;
      if (buffer.length < dataEnd + 2) return undefined;
      if (size === 0)
        return {
          status,
          body: Buffer.concat(parts).toString('utf8'),
          used: dataEnd + 2,
          close,
        };
      parts.push(buffer.subarray(lineEnd + 2, dataEnd));
      at = dataEnd + 2;
    }
  }
  // No length and not chunked: no body (what a 204 or a 304 sends).
  return { status, body: '', used: bodyStart, close };
}

/**
 * Keep-alive connections to one server, opened on demand up to `maxConnections`, one
 * request at a time on each. A request waits in line when all are busy, and its time keeps
 * running: `timeoutMs` counts from the moment the caller gives (when the request was due),
 * and past it the request fails with the code TIMEOUT and its connection is closed. Idle
 * connections are closed after IDLE_TIMEOUT_MS, before a server's own keep-alive timeout
 * can close one under a request being written (Node's default is 5 s).
 */
export class ConnectionPool {
  constructor({ host, port, maxConnections = 256, timeoutMs = 10_000 }) {
    Object.assign(this, {
      host,
      port,
      maxConnections,
      timeoutMs,
    });
    this.idle = [];
    this.open = 0;
    // Waiting requests from `waitingFrom` on (a queue without shift()'s copying).
    this.waiting = [];
    this.waitingFrom = 0;
    this.connections = new Set();
    this.sweeper = setInterval(() => this.sweep(), 250);
  }

  /**
   * Sends `bytes` (a whole request); `done(error, response)` runs once, with an error whose
   * `code` says what went wrong, or the response ({status, body}). `since`: where its time
   * starts (performance.now()), by default now.
   */
  request(bytes, done, since = performance.now()) {
    const job = { bytes, done, since };
    const connection = this.idle.pop();
    if (connection !== undefined) this.send(connection, job);
    else if (this.open < this.maxConnections) this.connect(job);
    else this.waiting.push(job);
  }

  connect(job) {
    this.open += 1;
    const socket = net.connect({
      host: this.host,
      port: this.port,
      noDelay: true,
    });
    const connection = {
      socket,
      job: undefined,
      buffer: Buffer.alloc(0),
      idleSince: 0,
      error: undefined,
    };
    this.connections.add(connection);
    socket.on('data', (chunk) => this.receive(connection, chunk));
    socket.on('error', (error) => (connection.error ??= error));
    socket.on('close', () =>
      this.lost(connection, connection.error ?? failure('CLOSED')),
    );
    this.send(connection, job);
  }

  send(connection, job) {
    connection.job = job;
    connection.socket.write(job.bytes);
  }

  receive(connection, chunk) {
    connection.buffer =
      connection.buffer.length === 0
        ? chunk
        : Buffer.concat([connection.buffer, chunk]);
    const response = parseResponse(connection.buffer);
    if (response === undefined) return;
    connection.buffer = connection.buffer.subarray(response.used);
    const { job } = connection;
    connection.job = undefined;
    if (response.close) this.drop(connection);
    else this.release(connection);
    job?.done(undefined, { status: response.status, body: response.body });
  }

  nextWaiting() {
    if (this.waitingFrom === this.waiting.length) return undefined;
    const job = this.waiting[this.waitingFrom];
    this.waiting[this.waitingFrom] = undefined;
    this.waitingFrom += 1;
    if (this.waitingFrom > 1024 && this.waitingFrom * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.waitingFrom);
      this.waitingFrom = 0;
    }
    return job;
  }

  /** A free connection takes the oldest waiting request, or rests. */
  release(connection) {
    const next = this.nextWaiting();
    if (next !== undefined) this.send(connection, next);
    else {
      connection.idleSince = performance.now();
      this.idle.push(connection);
    }
  }

  drop(connection) {
    if (!this.connections.delete(connection)) return;
    this.open -= 1;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    connection.socket.destroy();
    // A waiting request gets a new connection in its place.
    const next = this.nextWaiting();
    if (next !== undefined) this.connect(next);
  }

  lost(connection, error) {
    const { job } = connection;
    connection.job = undefined;
    this.drop(connection);
    job?.done(error);
  }

  sweep() {
    const now = performance.now();
    for (const connection of this.connections) {
      const { job } = connection;
      if (job !== undefined && now - job.since > this.timeoutMs) {
        connection.job = undefined;
        this.drop(connection);
        job.done(failure('TIMEOUT', 'timed out'));
      } else if (
        job === undefined &&
        now - connection.idleSince > IDLE_TIMEOUT_MS
      ) {
        this.drop(connection);
      }
    }
    // Waiting requests are in the order they came, so the oldest are first.
    for (;;) {
      const job = this.waiting[this.waitingFrom];
      if (job === undefined || now - job.since <= this.timeoutMs) break;
      this.nextWaiting().done(failure('TIMEOUT', 'timed out'));
    }
  }

  /** Closes every connection; a request still waiting or in flight fails (CLOSED). */
  close() {
    clearInterval(this.sweeper);
    const waiting = [];
    for (
      let job = this.nextWaiting();
      job !== undefined;
      job = this.nextWaiting()
    )
      waiting.push(job);
    for (const connection of this.connections) this.drop(connection);
    for (const job of waiting) job.done(failure('CLOSED', 'pool closed'));
  }
}
