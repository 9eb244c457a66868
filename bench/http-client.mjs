// A lean HTTP/1.1 keep-alive client for the open-loop generator. node:http costs several
// times more CPU per request, and on a 2-core machine the generator's CPU is taken from
// the server under test: at a few thousand requests per second node:http alone pushed the
// machine into overload. This one writes prebuilt request bytes and parses only what the
// two servers send (status line, Content-Length or chunked body).
import net from 'node:net';
import { performance } from 'node:perf_hooks';

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The bytes of one POST request with a JSON body. */
export function postRequest({ host, port, path, headers, body }) {
  const payload = Buffer.from(body);
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${host}:${port}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${payload.length}`,
    '',
    '',
  ];
  return Buffer.concat([Buffer.from(lines.join('\r\n')), payload]);
}

/**
 * Parses one response from `buffer`; undefined while it is incomplete. Returns the
 * status, the body text and how many bytes it used.
 */
function parseResponse(buffer) {
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
  // No length and not chunked: not something either server sends with a body.
  return { status, body: '', used: bodyStart, close };
}

/**
 * Keep-alive connections to one server, opened on demand up to `maxConnections`. A
 * request waits in a queue when all are busy (its latency keeps running: the caller
 * measures from when the request was due). Idle connections are closed after 4 s, before
 * the server's 5 s keep-alive timeout can close one under a request being written.
 */
export class ConnectionPool {
  constructor({ host, port, maxConnections = 256, timeoutMs = 10_000 }) {
    Object.assign(this, { host, port, maxConnections, timeoutMs });
    this.idle = [];
    this.open = 0;
    this.queue = [];
    this.connections = new Set();
    this.sweeper = setInterval(() => this.sweep(), 250);
  }

  /** Sends `bytes`; `done(error, status, body)` runs once. */
  request(bytes, done) {
    const job = { bytes, done, queuedAt: performance.now() };
    const connection = this.idle.pop();
    if (connection !== undefined) this.send(connection, job);
    else if (this.open < this.maxConnections) this.connect(job);
    else this.queue.push(job);
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
      sentAt: 0,
      idleSince: 0,
    };
    this.connections.add(connection);
    socket.on('data', (chunk) => this.receive(connection, chunk));
    socket.on('error', () => {});
    socket.on('close', () =>
      this.lost(connection, new Error('connection closed')),
    );
    this.send(connection, job);
  }

  send(connection, job) {
    connection.job = job;
    connection.sentAt = performance.now();
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
    job?.done(undefined, response.status, response.body);
  }

  /** A free connection takes the oldest waiting request, or rests. */
  release(connection) {
    const next = this.queue.shift();
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
    const next = this.queue.shift();
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
      if (
        connection.job !== undefined &&
        now - connection.sentAt > this.timeoutMs
      ) {
        const { job } = connection;
        connection.job = undefined;
        this.drop(connection);
        job.done(Object.assign(new Error('timed out'), { timeout: true }));
      } else if (
        connection.job === undefined &&
        now - connection.idleSince > 4_000
      ) {
        this.drop(connection);
      }
    }
    while (
      this.queue.length > 0 &&
      now - this.queue[0].queuedAt > this.timeoutMs
    ) {
      this.queue
        .shift()
        .done(Object.assign(new Error('timed out'), { timeout: true }));
    }
  }

  close() {
    clearInterval(this.sweeper);
    for (const connection of [...this.connections]) this.drop(connection);
    for (const job of this.queue.splice(0)) job.done(new Error('pool closed'));
  }
}
