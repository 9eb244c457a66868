// Start-up times: from spawning the built service to its first 200 on /health, on the run's
// database and on an embedded one (its first start, which makes the cluster, and a later one).
import { rm } from 'node:fs/promises';
import { freePort } from '../../test-kit/free-port.mjs';
import { dataDirectory, tableExists } from './database.mjs';
import { startService } from './service-and-baseline.mjs';

/** No start-up times (--skip-startup). */
export function noStartupTimes() {
  return {
    externalMs: [],
    externalFirstMs: [],
    embeddedFirstMs: [],
    embeddedLaterMs: [],
  };
}

/** Start-up to ready: on the external database, and on the embedded one (first, later). */
export async function measureStartup(ctx) {
  const startup = noStartupTimes();
  const hadSchema = await tableExists(ctx.pool);
  // Starts are cheap: at least 3, for a median that one slow start does not decide.
  const starts = Math.max(3, ctx.options.runs);
  for (let i = 0; i < starts + (hadSchema ? 0 : 1); i += 1) {
    const service = await startService(ctx, {
      databaseUrl: ctx.databaseUrl,
    });
    await service.stop();
    const first = i === 0 && !hadSchema;
    (first ? startup.externalFirstMs : startup.externalMs).push(
      service.readyMs,
    );
    ctx.log(
      `start-up, external database${first ? ' (migration)' : ''}: ${service.readyMs.toFixed(0)} ms`,
    );
  }
  for (let i = 0; i < ctx.options.runs; i += 1) {
    const dataDir = await dataDirectory('plant-store-bench-embedded-');
    const embedded = { dataDir, port: await freePort() };
    try {
      for (const list of [startup.embeddedFirstMs, startup.embeddedLaterMs]) {
        const service = await startService(ctx, { embedded });
        const exit = await service.stop(30_000);
        if (exit.code !== 0)
          ctx.log(
            `the service on the embedded database exited with ${exit.code ?? exit.signal}`,
          );
        list.push(service.readyMs);
        ctx.log(
          `start-up, embedded database (${list === startup.embeddedFirstMs ? 'first' : 'later'}): ${service.readyMs.toFixed(0)} ms`,
        );
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return startup;
}
