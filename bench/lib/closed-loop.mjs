// Closed loop: N connections, each sending its next request as soon as the last answer
// arrives (autocannon). It finds capacity; its latencies hide queueing, since a slow
// server also slows the arrivals.
import autocannon from 'autocannon';
import { watch } from './usage.mjs';
import { answerMatches, createWorkload } from './workload.mjs';

/**
 * closedLoop's settings for `connections` clients creating plants on `server` with `token`,
 * from a fresh workload.
 */
export function freshLoadOn(server, token, connections) {
  return { url: server.url, token, workload: createWorkload(), connections };
}

/**
 * Runs autocannon for `seconds` (or for `amount` requests, when given) at `connections`,
 * every request a fresh plant from `workload`. Latencies are kept here at full resolution
 * (autocannon's histogram rounds to whole milliseconds, too coarse at concurrency 1).
 * Returns the counts and the ids by outcome (200, other answer, no answer), for the
 * database check.
 */
export function closedLoop({
  url,
  token,
  workload,
  connections,
  seconds,
  amount,
}) {
  const latencies = [];
  const sentIds = [];
  const answered = new Set();
  const okIds = [];
  const failedIds = [];
  const statuses = {};
  let wrongAnswers = 0;
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const instance = autocannon(
      {
        url: `${url}/plants`,
        connections,
        ...(amount === undefined ? { duration: seconds } : { amount }),
        timeout: 10,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        requests: [
          {
            method: 'POST',
            // Requests on one connection are sequential (no pipelining), so the context
            // still holds this request's plant when its answer comes back.
            // Every request built here is written to its connection at once.
            setupRequest(request, context) {
              const next = workload.next();
              context.sent = next;
              sentIds.push(next.id);
              return { ...request, body: next.body };
            },
            onResponse(status, body, context) {
              statuses[status] = (statuses[status] ?? 0) + 1;
              const { id, plant } = context.sent;
              answered.add(id);
              if (status === 200 && answerMatches(body, plant)) okIds.push(id);
              else {
                if (status === 200) wrongAnswers += 1;
                failedIds.push(id);
              }
            },
          },
        ],
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        resolve({
          seconds,
          latencies,
          okIds,
          failedIds,
          // No answer: in flight when the run stopped, timed out, or lost with a connection.
          lostIds: sentIds.filter((id) => !answered.has(id)),
          statuses,
          wrongAnswers,
          socketErrors: result.errors - result.timeouts,
          timeouts: result.timeouts,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) =>
      latencies.push(responseTime),
    );
  });
}

/**
 * One measured closed-loop window (`closedLoop(load)`) on a server process: the run, what
 * the process used meanwhile (`watch`), the answers of any status, and the CPU per answer,
 * whole process and main thread.
 */
export async function measuredClosedLoop(pid, load, ourPids = []) {
  const watcher = watch(pid, ourPids);
  const run = await closedLoop(load);
  const usage = watcher.stop();
  const answered = Object.values(run.statuses).reduce((a, b) => a + b, 0);
  return {
    run,
    usage,
    answered,
    cpuMsPerAnswer: (usage.cpuSeconds * 1000) / answered,
    mainThreadCpuMsPerAnswer: (usage.mainThreadCpuSeconds * 1000) / answered,
  };
}
