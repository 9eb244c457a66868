// npm run bench: builds the service, starts it as production runs it, and measures it
// against a framework-free baseline and pgbench on one database, in one run. See
// bench/README.md for what each figure means, and bench/lib/ for each measurement.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CleanUps } from '../lib/clean-ups.mjs';
import { serverVersion } from '../lib/database.mjs';
import { busyOverOneSecond } from '../lib/machine.mjs';
import { RESULTS, ROOT } from '../lib/paths.mjs';
import { preloadPhase } from '../lib/preload-phase.mjs';
import { progressLog } from '../lib/progress-log.mjs';
import { referencesOfRun } from '../lib/references.mjs';
import { repetition } from '../lib/repetition.mjs';
import { openRunContext } from '../lib/run-context.mjs';
import { runOptions } from '../lib/run-options.mjs';
import { publishResults, runResults } from '../lib/run-results.mjs';
import { measureStartup, noStartupTimes } from '../lib/startup-times.mjs';
import { tracingCost } from '../lib/tracing-cost.mjs';

const { flags, options, topologies, serviceFlags, partial } = runOptions();
const started = Date.now();
const log = progressLog(started);
const cleanUps = new CleanUps(log);
cleanUps.onSignals();

async function main() {
  const loadStart = loadavg();
  const busyBefore = await busyOverOneSecond();
  if (!flags['skip-build']) {
    log('building (npm run build)');
    execFileSync('npm', ['run', 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    });
  }
  await mkdir(RESULTS, { recursive: true });
  // The service's request log of this run only (hundreds of MB for a full run).
  await writeFile(join(RESULTS, 'service.log'), '');
  const { ctx, database } = await openRunContext({
    options,
    serviceFlags,
    log,
    cleanUps,
  });

  const startup = flags['skip-startup']
    ? noStartupTimes()
    : await measureStartup(ctx);
  const tracingOnly = flags['tracing-only'];
  const references =
    flags['skip-references'] || tracingOnly
      ? {}
      : await referencesOfRun(ctx, { topologies, flags });
  const tracing = flags['skip-tracing']
    ? null
    : await tracingCost(ctx, {
        rounds: options.runs,
        warmupSeconds: options.tracingWarmupSeconds,
        seconds: options.referenceSeconds,
        versus: flags['tracing-versus'],
        log,
      });
  const only = flags['references-only'] || tracingOnly;
  const runs = [];
  if (!only)
    for (let i = 0; i < options.runs; i += 1)
      runs.push(await repetition(ctx, i));
  const preload = only ? [] : await preloadPhase(ctx);

  const results = runResults({
    started,
    loadStart,
    busyBefore,
    database,
    postgres: await serverVersion(ctx.pool),
    ctx,
    startup,
    references,
    runs,
    preload,
  });
  results.tracing = tracing;
  await cleanUps.runAll();
  await publishResults(results, { partial, log });
}

main().catch(async (error) => {
  log(`failed: ${error.stack ?? error}`);
  await cleanUps.runAll();
  process.exit(1);
});
