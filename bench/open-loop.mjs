// Open loop: a constant arrival rate. Request i is due at t0 + i / rate and is sent then,
// however many earlier requests are still waiting for an answer, and its latency is
// counted from when it was due, not from when it went out. A server that stalls therefore
// pays for every request that arrived during the stall (no coordinated omission), which
// is what users of a busy service see. autocannon's --rate is not this: it sends each
// second's quota as a burst at the start of the second, and then waits.
//
// As a module: openLoop({...}). As a command, for a quick look at a running server:
//   node bench/open-loop.mjs --url http://127.0.0.1:3000 --token T --rate 500 --seconds 10
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ConnectionPool, postRequest } from './http-client.mjs';
import { summarize } from './stats.mjs';
import { answerMatches, createWorkload } from './workload.mjs';

/**
 * Sends `rate` requests per second for `warmupSeconds + seconds`; only requests due in
 * the last `seconds` are measured. `onMeasureStart` runs when the first measured request
 * is due (to start CPU and memory watches). Waits for every measured answer (or its
 * timeout) before resolving.
 */
export async function openLoop({
  url,
  token,
  workload,
  rate,
  seconds,
  warmupSeconds = 0,
  timeoutMs = 10_000,
  maxConnections = 256,
  onMeasureStart = () => {},
}) {
  const target = new URL(url);
  // Enough connections that the generator rarely waits for one at sane rates; if it must,
  // the wait still counts, because latency starts at the due time.
  const pool = new ConnectionPool({
    host: target.hostname,
    port: Number(target.port),
    maxConnections,
    timeoutMs,
  });
  const headers = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
  };
  const interval = 1000 / rate;
  const warmupCount = Math.round(rate * warmupSeconds);
  const total = warmupCount + Math.round(rate * seconds);

  const latencies = [];
  const sendLags = [];
  const okIds = [];
  const failedIds = [];
  const lostIds = [];
  const statuses = {};
  let wrongAnswers = 0;
  let socketErrors = 0;
  let timeouts = 0;
  let outstanding = 0;
  let maxOutstanding = 0;
  let lastAnswerAt = 0;
  let measuredOk = 0;

  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  let next = 0;
  let allSent = false;
  const t0 = performance.now() + 5;
  const measureFrom = t0 + warmupCount * interval;

  function send(index, due) {
    const measured = index >= warmupCount;
    const sent = workload.next();
    const now = performance.now();
    if (measured) sendLags.push(now - due);
    outstanding += 1;
    maxOutstanding = Math.max(maxOutstanding, outstanding);
    let settled = false;
    const settle = (outcome, status, body) => {
      if (settled) return;
      settled = true;
      outstanding -= 1;
      const at = performance.now();
      // Latency and throughput count the measured window only; failures and the ids
      // answered 200 count the warm-up too, since the database check covers every row.
      if (measured) {
        lastAnswerAt = Math.max(lastAnswerAt, at);
        latencies.push(outcome === 'answer' ? at - due : Infinity);
      }
      if (outcome === 'answer') {
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 200 && answerMatches(body, sent.plant)) {
          okIds.push(sent.id);
          if (measured) measuredOk += 1;
        } else {
          if (status === 200) wrongAnswers += 1;
          failedIds.push(sent.id);
        }
      } else {
        if (outcome === 'timeout') timeouts += 1;
        else socketErrors += 1;
        lostIds.push(sent.id);
      }
      if (allSent && outstanding === 0) finish();
    };
    const bytes = postRequest({
      host: target.hostname,
      port: target.port,
      path: '/plants',
      headers,
      body: sent.body,
    });
    pool.request(bytes, (error, status, body) => {
      if (error === undefined) settle('answer', status, body);
      else settle(error.timeout ? 'timeout' : 'error');
    });
  }

  let measureStarted = false;
  function tick() {
    const now = performance.now();
    // Everything due by now goes out now. Timers fire about every millisecond, so at a
    // few thousand requests per second a tick sends a handful; their lateness (the send
    // lag, reported) is part of their latency.
    while (next < total && t0 + next * interval <= now) {
      const due = t0 + next * interval;
      if (!measureStarted && next >= warmupCount) {
        measureStarted = true;
        onMeasureStart();
      }
      send(next, due);
      next += 1;
    }
    if (next < total) {
      // Sleeping to the next due time, never spinning: the server needs the CPU.
      setTimeout(tick, Math.max(0, t0 + next * interval - performance.now()));
    } else {
      allSent = true;
      if (outstanding === 0) finish();
    }
  }
  setTimeout(tick, 5);
  await finished;
  pool.close();

  const measuredCount = total - warmupCount;
  const windowMs = Math.max(lastAnswerAt - measureFrom, 1);
  const answered = latencies.filter(Number.isFinite).length;
  return {
    rate,
    requests: measuredCount,
    seconds: windowMs / 1000,
    /** Answers (any status) per second over the measured window. */
    achievedRate: answered / (windowMs / 1000),
    /** 200s with the right body per second over the measured window. */
    okRate: measuredOk / (windowMs / 1000),
    latency: summarize(latencies),
    sendLag: summarize(sendLags),
    maxOutstanding,
    okIds,
    failedIds,
    lostIds,
    statuses,
    wrongAnswers,
    socketErrors,
    timeouts,
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:3000' },
      token: { type: 'string' },
      rate: { type: 'string', default: '500' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
    },
  });
  if (values.token === undefined) throw new Error('--token is required');
  const result = await openLoop({
    url: values.url,
    token: values.token,
    // Started from the clock so that reruns against the same table do not collide.
    workload: createWorkload({ start: Date.now() * 1000 }),
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    warmupSeconds: Number(values.warmup),
  });
  const { okIds, failedIds, lostIds, ...shown } = result;
  console.log(JSON.stringify({ ...shown, ok: okIds.length }, null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
