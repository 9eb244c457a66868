// The two servers a run measures side by side: the built service as production runs it,
// and the framework-free baseline (servers/baseline-server.mjs), on the run's database.
import { join } from 'node:path';
import { BASELINE_SERVER, RESULTS } from './paths.mjs';
import { runtimeOf, serviceArgs, startServer } from './servers.mjs';

/**
 * The service as production runs it: the built main.js, production mode, production
 * logging (its default level: a JSON line per request), written to a file as a log
 * shipper would read it, not through a pipe this process would have to drain. Without a
 * `databaseUrl` it starts its own embedded database, in `embedded`'s directory.
 */
export function startService(ctx, { databaseUrl, embedded } = {}) {
  return startServer({
    name: 'service',
    args: serviceArgs(ctx.serviceFlags),
    env: {
      API_TOKENS: ctx.token,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: undefined,
      ...(embedded && {
        DATA_DIR: embedded.dataDir,
        EMBEDDED_DATABASE_PORT: String(embedded.port),
      }),
    },
    logFile: join(RESULTS, 'service.log'),
  });
}

function startBaseline(ctx) {
  return startServer({
    name: 'baseline',
    args: [BASELINE_SERVER],
    env: { DATABASE_URL: ctx.databaseUrl, API_TOKENS: ctx.token },
  });
}

/** Both servers on the run's database, stopped on the way out if stopPair does not. */
export async function startPair(ctx) {
  // The service first: its migration creates the table the baseline expects.
  const service = await startService(ctx, { databaseUrl: ctx.databaseUrl });
  ctx.cleanUps.add(() => service.stop());
  const baseline = await startBaseline(ctx);
  ctx.cleanUps.add(() => baseline.stop());
  ctx.ourPids = [service.pid, baseline.pid];
  // What each server really runs on, for the report (the same binary, unless broken).
  ctx.runtimes = {
    service: runtimeOf(service.pid),
    baseline: runtimeOf(baseline.pid),
  };
  ctx.log(
    `service on ${ctx.runtimes.service} (node ${serviceArgs(ctx.serviceFlags).slice(0, -1).join(' ')} dist/service/main.js), baseline on ${ctx.runtimes.baseline}`,
  );
  return { service, baseline };
}

export async function stopPair(ctx, { service, baseline }) {
  // Both were added last; stopping them twice is harmless.
  ctx.cleanUps.forgetLast(2);
  await Promise.all([service.stop(), baseline.stop()]);
}
