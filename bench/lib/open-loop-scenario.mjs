// One open-loop scenario: a server offered creates at a constant rate, each one's latency
// counted from when it was due, then checked against the table.
import { loadavg } from 'node:os';
import { checkAnswers } from './answer-check.mjs';
import { emptyTable, waitForQuiet } from './database.mjs';
import { settle } from './machine.mjs';
import { openLoop } from './open-loop.mjs';
import { usagePerRequest, watch } from './usage.mjs';

/** Open loop on one server at `rate` requests per second. */
export async function openScenario(ctx, server, rate) {
  await emptyTable(ctx.pool);
  const calm = await settle(ctx.options.idleWaitSeconds, ctx.log);
  const load1 = loadavg()[0];
  let watcher;
  const run = await openLoop({
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    rate,
    seconds: ctx.options.openSeconds,
    warmupSeconds: ctx.options.openWarmupSeconds,
    onMeasureStart: () => (watcher = watch(server.pid, ctx.ourPids)),
  });
  const usage = watcher.stop();
  await waitForQuiet(ctx.pool);
  const served = run.latency.count;
  const verdict = await checkAnswers(ctx.pool, 0, run);
  const result = {
    rate,
    rps: run.okRate,
    achievedRate: run.achievedRate,
    ...run.latency,
    sendLagP99: run.sendLag.p99,
    maxOutstanding: run.maxOutstanding,
    ...usagePerRequest(usage, served),
    load1,
    ...calm,
    ...verdict,
  };
  // Below the asked rate, the server (or the machine) could not keep up: the latencies
  // are then those of an overload, not of half the capacity.
  result.keptUp = run.achievedRate >= 0.95 * rate;
  if (!result.keptUp)
    ctx.log(
      `${server.name} answered ${run.achievedRate.toFixed(0)}/s of ${rate.toFixed(0)}/s: overloaded`,
    );
  ctx.log(
    `${server.name} open ${rate.toFixed(0)}/s: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `p99.9 ${result.p999.toFixed(2)} ms, send lag p99 ${result.sendLagP99.toFixed(2)} ms, ${result.errors} errors`,
  );
  return result;
}
