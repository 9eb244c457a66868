// One closed-loop scenario: a server, a number of connections each sending its next create
// as soon as the last is answered, warmed up, measured, then checked against the table.
import { loadavg } from 'node:os';
import { checkAnswers, combineAnswers } from './answer-check.mjs';
import { closedLoop, measuredClosedLoop } from './closed-loop.mjs';
import {
  checkpoint,
  countRows,
  emptyTable,
  waitForQuiet,
} from './database.mjs';
import { settle } from './machine.mjs';
import { summarize } from './stats.mjs';
import { usagePerRequest } from './usage.mjs';

/** Closed loop on one server: warm-up, then the measured window, then the check. */
export async function closedScenario(
  ctx,
  server,
  connections,
  { fresh = true } = {},
) {
  if (fresh) await emptyTable(ctx.pool);
  else await checkpoint(ctx.pool);
  const rowsBefore = await countRows(ctx.pool);
  const calm = await settle(ctx.options.idleWaitSeconds, ctx.log);
  const common = {
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    connections,
  };
  const warm = await closedLoop({
    ...common,
    seconds: ctx.options.warmupSeconds,
  });
  const load1 = loadavg()[0];
  const { run, usage, answered } = await measuredClosedLoop(
    server.pid,
    { ...common, seconds: ctx.options.seconds },
    ctx.ourPids,
  );
  await waitForQuiet(ctx.pool);
  const latency = summarize(run.latencies);
  const verdict = await checkAnswers(
    ctx.pool,
    rowsBefore,
    combineAnswers(warm, run),
  );
  const result = {
    connections,
    rps: run.okIds.length / run.seconds,
    ...latency,
    ...usagePerRequest(usage, answered),
    load1,
    ...calm,
    ...verdict,
  };
  ctx.log(
    `${server.name} c=${connections}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99.toFixed(2)} ms, ` +
      `CPU ${result.cpuMsPerRequest.toFixed(3)} ms/req, RSS ${result.peakRssMb.toFixed(0)} MB, ${result.errors} errors`,
  );
  return result;
}
