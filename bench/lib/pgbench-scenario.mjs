// The database's own limit in a run: pgbench at a number of clients on an emptied table,
// with how busy the rest of the machine was meanwhile.
import { loadavg } from 'node:os';
import { emptyTable } from './database.mjs';
import { settle } from './machine.mjs';
import { pgbench } from './pgbench.mjs';
import { watch } from './usage.mjs';

export async function pgbenchScenario(ctx, clients) {
  await emptyTable(ctx.pool);
  const calm = await settle(ctx.options.idleWaitSeconds, ctx.log);
  const load1 = loadavg()[0];
  // Watching the harness itself, only to see how busy everyone else was meanwhile.
  const watcher = watch(process.pid, ctx.ourPids);
  const result = await pgbench({
    url: ctx.databaseUrl,
    clients,
    seconds: ctx.options.pgbenchSeconds,
  });
  const { othersBusy } = watcher.stop();
  ctx.log(`pgbench c=${clients}: ${result.tps.toFixed(0)} tps`);
  return {
    ...result,
    rps: result.tps,
    errors: result.failed,
    load1,
    othersBusy,
    ...calm,
  };
}
