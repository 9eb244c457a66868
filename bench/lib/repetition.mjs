// One run of the closed and open loops: the service and the baseline side by side at each
// concurrency, at a constant rate, then pgbench on the same table.
import { loadavg } from 'node:os';
import { closedScenario } from './closed-loop-scenario.mjs';
import { openScenario } from './open-loop-scenario.mjs';
import { pgbenchScenario } from './pgbench-scenario.mjs';
import { startPair, stopPair } from './service-and-baseline.mjs';
import { highWaterMb } from './usage.mjs';

export async function repetition(ctx, index) {
  ctx.log(`run ${index + 1} of ${ctx.options.runs}`);
  const results = { loadStart: loadavg() };
  const pair = await startPair(ctx);
  for (const c of ctx.options.concurrency) {
    results[`baseline closed ${c}`] = await closedScenario(
      ctx,
      pair.baseline,
      c,
    );
    results[`service closed ${c}`] = await closedScenario(ctx, pair.service, c);
  }
  // The latency that counts: a constant arrival rate at half what the baseline sustains
  // (the target), and at half what the service sustains (its queueing when not overloaded).
  const half = (key) => Math.max(1, Math.round(results[key].rps / 2));
  const rate = half('baseline closed 64');
  results['baseline open'] = await openScenario(ctx, pair.baseline, rate);
  results['service open'] = await openScenario(ctx, pair.service, rate);
  const serviceRate = half('service closed 64');
  results['baseline open half-service'] = await openScenario(
    ctx,
    pair.baseline,
    serviceRate,
  );
  results['service open half-service'] = await openScenario(
    ctx,
    pair.service,
    serviceRate,
  );
  if (ctx.pgbench) {
    for (const c of ctx.options.pgbenchConcurrency)
      results[`pgbench ${c}`] = await pgbenchScenario(ctx, c);
  }
  results.servicePeakRssMb = Math.max(
    ...Object.entries(results)
      .filter(([key]) => key.startsWith('service '))
      .map(([, value]) => value.peakRssMb),
  );
  results.serviceHighWaterMb = highWaterMb(pair.service.pid);
  results.baselinePeakRssMb = highWaterMb(pair.baseline.pid);
  await stopPair(ctx, pair);
  return results;
}
