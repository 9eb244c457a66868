// The benchmark's open loop: test-kit's (a constant arrival rate, each latency counted from
// when its request was due: no coordinated omission), with a warm-up, the database check's
// ids and the figures of bench/README.md.
// bench/scenarios/open-loop.mjs runs it on its own against a running server.
import { performance } from 'node:perf_hooks';
import { openLoop as sendAtRate } from '../../test-kit/open-loop.mjs';
import { summarize } from './stats.mjs';
import { answerMatches } from './workload.mjs';

/**
 * Sends `rate` requests per second for `warmupSeconds + seconds`; only requests due in
 * the last `seconds` are measured. `onMeasureStart` runs when the first measured request
 * is due (to start CPU and memory watches). Waits for every answer (or its timeout) before
 * resolving.
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
  const warmupCount = Math.round(rate * warmupSeconds);
  const total = warmupCount + Math.round(rate * seconds);

  // Every answer, the warm-up's too: the database check covers every row.
  const answers = {
    okIds: [],
    failedIds: [],
    lostIds: [],
    statuses: {},
    wrongAnswers: 0,
    socketErrors: 0,
    timeouts: 0,
  };
  const latencies = [];
  const sendLags = [];
  let outstanding = 0;
  let maxOutstanding = 0;
  let lastAnswerAt = 0;
  let measuredOk = 0;

  function next(index, due) {
    const measured = index >= warmupCount;
    if (index === warmupCount) onMeasureStart();
    const sent = workload.next();
    if (measured) sendLags.push(performance.now() - due);
    outstanding += 1;
    maxOutstanding = Math.max(maxOutstanding, outstanding);
    // Latency and throughput count the measured window only.
    const settle = (outcome) => {
      outstanding -= 1;
      if (measured) {
        lastAnswerAt = Math.max(lastAnswerAt, due + outcome.ms);
        latencies.push(outcome.error === undefined ? outcome.ms : Infinity);
      }
      const { statuses } = answers;
      if (outcome.error === undefined) {
        statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
        if (outcome.status === 200 && answerMatches(outcome.body, sent.plant)) {
          answers.okIds.push(sent.id);
          if (measured) measuredOk += 1;
        } else {
          if (outcome.status === 200) answers.wrongAnswers += 1;
          answers.failedIds.push(sent.id);
        }
      } else {
        if (outcome.error === 'TIMEOUT') answers.timeouts += 1;
        else answers.socketErrors += 1;
        answers.lostIds.push(sent.id);
      }
    };
    return { body: sent.body, settle };
  }

  // Enough connections that the generator rarely waits for one at sane rates; if it must,
  // the wait still counts, because latency starts at the due time.
  const { startedAt } = await sendAtRate({
    url,
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
    },
    rate,
    count: total,
    next,
    timeoutMs,
    maxConnections,
  });

  const measureFrom = startedAt + (warmupCount * 1000) / rate;
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
    ...answers,
  };
}
