// The closed loop at 64 connections on a table preloaded to 1M (and 10M) rows: what a big
// primary key index costs each server.
import { closedScenario } from './closed-loop-scenario.mjs';
import { emptyTable, preload, tableSize } from './database.mjs';
import { startPair, stopPair } from './service-and-baseline.mjs';

export async function preloadPhase(ctx) {
  const phases = [];
  if (ctx.options.preloadRows.length === 0) return phases;
  const pair = await startPair(ctx);
  await emptyTable(ctx.pool);
  let loaded = 0;
  const c = ctx.options.preloadConcurrency;
  for (const rows of ctx.options.preloadRows) {
    const label = rows >= 1_000_000 ? `${rows / 1_000_000}M` : String(rows);
    ctx.log(`preloading to ${label} rows`);
    const t0 = Date.now();
    await preload(ctx.pool, loaded + 1, rows);
    loaded = rows;
    const phase = {
      rows,
      label,
      loadSeconds: (Date.now() - t0) / 1000,
      tableSize: await tableSize(ctx.pool),
      runs: [],
    };
    ctx.log(
      `preloaded ${label} rows in ${phase.loadSeconds.toFixed(0)} s (${phase.tableSize})`,
    );
    for (let i = 0; i < ctx.options.runs; i += 1) {
      phase.runs.push({
        [`baseline closed ${c}`]: await closedScenario(ctx, pair.baseline, c, {
          fresh: false,
        }),
        [`service closed ${c}`]: await closedScenario(ctx, pair.service, c, {
          fresh: false,
        }),
      });
    }
    phases.push(phase);
  }
  await stopPair(ctx, pair);
  return phases;
}
