// Open loop: a constant arrival rate, for the benchmark (bench/lib/open-loop.mjs); the
// overload scenario has its own generator in C (test/support/reliability/load-generator/).
// Request i is due at t0 + i / rate and is sent then, however many earlier requests are
// still waiting for an answer, and its time is counted from when it was due, not from when
// it went out. A server that stalls therefore pays for every request that arrived during
// the stall (no coordinated omission), which is what users of a busy service see.
// autocannon's --rate is not this: it sends each second's quota as a burst at the start of
// the second, and then waits. Plain JavaScript so the .mjs benchmark can import it too;
// its types are in open-loop.d.mts.
import { performance } from 'node:perf_hooks';
import { ConnectionPool } from './http-client.mjs';

/**
 * Sends `count` POSTs to `url` + `path` at `rate` a second, each with `headers` and the body
 * `next(index, dueAt)` gives when it is due (dueAt: its performance.now() time), whose
 * `settle(outcome)` later gets {status, body, ms} or {error, ms}: ms from the due time, error
 * a code (TIMEOUT past `timeoutMs`, ECONNRESET, CLOSED...). Over a ConnectionPool of
 * `maxConnections`. Resolves once every request is settled, with when request 0 was due.
 */
export async function openLoop({
  url,
  path = '/plants',
  headers,
  rate,
  count,
  next,
  timeoutMs = 10_000,
  maxConnections = 256,
}) {
  const { hostname, port, host } = new URL(url);
  const pool = new ConnectionPool({
    host: hostname,
    port: Number(port),
    maxConnections,
    timeoutMs,
  });
  const head =
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    'Content-Length: ';

  const interval = 1000 / rate;
  let sent = 0;
  let outstanding = 0;
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const t0 = performance.now() + 5;

  function send(index, dueAt) {
    const { body, settle } = next(index, dueAt);
    outstanding += 1;
    const bytes = Buffer.from(
      `${head}${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    pool.request(
      bytes,
      (error, response) => {
        const ms = performance.now() - dueAt;
        settle(
          error === undefined
            ? { status: response.status, body: response.body, ms }
            : { error: error.code ?? String(error), ms },
        );
        outstanding -= 1;
        if (sent === count && outstanding === 0) finish();
      },
      dueAt,
    );
  }

  function tick() {
    const now = performance.now();
    // Everything due by now goes out now. Timers fire about every millisecond, so at a few
    // thousand requests per second a tick sends a handful; their lateness is part of
    // their time.
    while (sent < count && t0 + sent * interval <= now) {
      send(sent, t0 + sent * interval);
      sent += 1;
    }
    if (sent < count)
      // Sleeping to the next due time, never spinning: the server needs the CPU.
      setTimeout(tick, Math.max(0, t0 + sent * interval - performance.now()));
    else if (outstanding === 0) finish();
  }
  setTimeout(tick, 5);
  await finished;
  pool.close();
  return { startedAt: t0 };
}
