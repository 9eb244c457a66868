// npm run bench: builds the service, starts it as production runs it, and measures it
// against a framework-free baseline and pgbench on one database, in one run. See
// bench/README.md for what each figure means.
import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test-kit/free-port.mjs';
import { productionNodeFlags } from '../../test-kit/node-process.mjs';
import { commandLine } from '../lib/cli.mjs';
import { closedLoop, measuredClosedLoop } from '../lib/closed-loop.mjs';
import {
  countPresent,
  checkpoint,
  countRows,
  dataDirectory,
  emptyTable,
  harnessPool,
  openDatabase,
  preload,
  serverVersion,
  tableExists,
  tableSize,
  waitForQuiet,
} from '../lib/database.mjs';
import { machineTicks, waitForIdleMachine } from '../lib/machine.mjs';
import { openLoop } from '../lib/open-loop.mjs';
import { BASELINE_SERVER, BENCH, RESULTS, ROOT } from '../lib/paths.mjs';
import { pgbench, pgbenchVersion } from '../lib/pgbench.mjs';
import { referenceRounds, TOPOLOGIES } from '../lib/references.mjs';
import { formatReport, writeResults } from '../lib/report.mjs';
import { runtimeOf, serviceArgs, startServer } from '../lib/servers.mjs';
import { summarize } from '../lib/stats.mjs';
import {
  highWaterMb,
  postmasterOf,
  setPostmasterPid,
  watch,
} from '../lib/usage.mjs';
import { createWorkload, newToken } from '../lib/workload.mjs';

const flags = commandLine({
  numbers: { runs: undefined, 'idle-wait': undefined },
  flags: [
    'quick',
    'skip-preload',
    'skip-references',
    'references-only',
    'skip-build',
    'skip-startup',
    'cpu-prof',
    'help',
  ],
  strings: {
    ids: 'random',
    note: undefined,
    versus: undefined,
    references: undefined,
    topology: 'both',
  },
});

if (flags.help) {
  process.stdout.write(`npm run bench -- [options]
  --quick          smoke check: 1 run, 1 s warm-up + 3 s per scenario, 1M preload only
  --runs N         repetitions (default 3; medians are reported)
  --skip-preload   no 1M / 10M preloaded-table scenarios
  --skip-references  no comparison with the grouping baseline and the docs-style app
  --references-only  only that comparison (wrk, pinned cores), after the start-up times
  --references LIST  only these beside the service and the grouping baseline (comma-separated:
                   baseline, docs-style, "service, no flags"; none: "")
  --versus DIST    a second service, from another build's dist/ directory, in the same rounds
                   of the references: B/A per round (an A/B on the targets' own measurement)
  --topology T     the references' topology: production (each server alone on its core,
                   wrk and PostgreSQL on the other: the targets), co-located (PostgreSQL on
                   the server's core), or both (default)
  --skip-build     use the existing dist/ (after a build of the current source)
  --skip-startup   no start-up times (an A/B of the references does not need them)
  --cpu-prof       start the service with --cpu-prof (profiles in bench/results/profiles;
                   profiling slows it, so the figures of such a run are not comparable)
  --ids KIND       random (default: inserts spread over the whole primary key index) or
                   sequential (increasing ids: inserts go to one place in the index)
  --idle-wait S    before each scenario, wait up to S seconds (default 10, quick 5) for
                   the machine to be at most 25% busy (0: do not wait)
  --note TEXT      a note for the heading of the results (e.g. "provisional")
DATABASE_URL set: that database (its name must contain "bench" or "test"); unset: an
embedded PostgreSQL in a temporary directory.
`);
  process.exit(0);
}

const quick = flags.quick;
const options = {
  runs: flags.runs ?? (quick ? 1 : 3),
  warmupSeconds: quick ? 1 : 3,
  seconds: quick ? 3 : 10,
  openWarmupSeconds: quick ? 1 : 3,
  openSeconds: quick ? 3 : 10,
  pgbenchSeconds: quick ? 3 : 10,
  concurrency: [1, 16, 64, 256],
  pgbenchConcurrency: [16, 64],
  preloadConcurrency: 64,
  preloadRows: flags['skip-preload']
    ? []
    : quick
      ? [1_000_000]
      : [1_000_000, 10_000_000],
  referenceSeconds: quick ? 3 : 8,
  referenceC1Seconds: quick ? 2 : 3,
  ids: flags.ids,
  idleWaitSeconds: flags['idle-wait'] ?? (quick ? 5 : 10),
  note: flags.note,
};
if (!['random', 'sequential'].includes(options.ids))
  throw new Error('--ids must be random or sequential');
const topologies =
  flags.topology === 'both' ? Object.keys(TOPOLOGIES) : [flags.topology];
if (!topologies.every((name) => name in TOPOLOGIES))
  throw new Error(
    `--topology must be both or one of ${Object.keys(TOPOLOGIES).join(', ')}`,
  );
if (!Number.isInteger(options.runs) || options.runs < 1)
  throw new Error('--runs must be a positive integer');

const started = Date.now();
const log = (message) =>
  process.stderr.write(
    `[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s, load ${loadavg()[0].toFixed(2)}] ${message}\n`,
  );

// Everything started here is stopped on the way out, also on Ctrl-C.
const cleanups = [];
async function cleanUp() {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop();
    await cleanup().catch((error) => log(`clean-up failed: ${error.message}`));
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    cleanUp().finally(() => process.exit(130));
  });
}

function machine() {
  const cpuinfo = execFileSync('cat', ['/proc/cpuinfo'], { encoding: 'utf8' });
  const model =
    /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model;
  return {
    cores: cpus().length,
    cpuModel: model,
    memoryGiB: totalmem() / 2 ** 30,
    os: `${type()} ${release()}`,
    node: process.version,
  };
}

async function busyOverOneSecond() {
  const before = machineTicks();
  await sleep(1000);
  const after = machineTicks();
  return (after.busy - before.busy) / (after.total - before.total);
}

// Profiling slows the service: the figures of such a run are not comparable.
const cpuProfile = flags['cpu-prof']
  ? ['--cpu-prof', '--cpu-prof-dir', join(RESULTS, 'profiles')]
  : [];

/**
 * The service as production runs it: the built main.js, production mode, production
 * logging (its default level: a JSON line per request), written to a file as a log
 * shipper would read it, not through a pipe this process would have to drain.
 */
function startService({ databaseUrl, token, embedded }) {
  return startServer({
    name: 'service',
    args: serviceArgs(cpuProfile),
    env: {
      API_TOKENS: token,
      // Unset: the service starts its own embedded database, in `embedded`'s directory.
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

function startBaseline({ databaseUrl, token }) {
  return startServer({
    name: 'baseline',
    args: [BASELINE_SERVER],
    env: { DATABASE_URL: databaseUrl, API_TOKENS: token },
  });
}

/**
 * What the database says about the answers. Every 200 must be a row; a request answered
 * otherwise must have written nothing; a request with no answer (in flight when a closed
 * loop stopped, or lost) may or may not have; and no other row may appear.
 */
async function check(pool, rowsBefore, answers) {
  const { okIds, failedIds, lostIds, statuses } = answers;
  const { wrongAnswers, socketErrors, timeouts } = answers;
  const rowsAdded = (await countRows(pool)) - rowsBefore;
  const missing = okIds.length - (await countPresent(pool, okIds));
  const writtenForFailures = await countPresent(pool, failedIds);
  const writtenUnanswered = await countPresent(pool, lostIds);
  const stray =
    rowsAdded -
    (okIds.length - missing) -
    writtenForFailures -
    writtenUnanswered;
  const non200 = Object.entries(statuses)
    .filter(([status]) => status !== '200')
    .reduce((sum, [, count]) => sum + count, 0);
  const errorDetail = {};
  if (non200)
    errorDetail.statuses = Object.fromEntries(
      Object.entries(statuses).filter(([s]) => s !== '200'),
    );
  if (socketErrors) errorDetail.socketErrors = socketErrors;
  if (timeouts) errorDetail.timeouts = timeouts;
  if (wrongAnswers) errorDetail.wrongAnswers = wrongAnswers;
  if (missing) errorDetail.missingRows = missing;
  if (writtenForFailures) errorDetail.rowsForFailedAnswers = writtenForFailures;
  if (stray) errorDetail.strayRows = stray;
  // Requests cut off at the end of a closed loop are not errors; lost ones are (counted
  // as socket errors or timeouts above).
  const cutOff = lostIds.length - socketErrors - timeouts;
  return {
    errors:
      non200 +
      socketErrors +
      timeouts +
      wrongAnswers +
      missing +
      Math.abs(stray),
    // The answers and the table disagree: what "correct" rules out, load or not.
    integrityErrors:
      wrongAnswers + missing + writtenForFailures + Math.abs(stray),
    errorDetail,
    cutOff,
    unansweredRows: writtenUnanswered,
  };
}

function usagePerRequest(usage, served) {
  return {
    cpuMsPerRequest: (usage.cpuSeconds * 1000) / served,
    mainThreadCpuMsPerRequest: (usage.mainThreadCpuSeconds * 1000) / served,
    peakRssMb: usage.peakRssMb,
    machineBusy: usage.machineBusy,
    othersBusy: usage.othersBusy,
  };
}

/** Closed loop on one server: warm-up, then the measured window, then the check. */
async function closedScenario(ctx, server, connections, { fresh = true } = {}) {
  if (fresh) await emptyTable(ctx.pool);
  else await checkpoint(ctx.pool);
  const rowsBefore = await countRows(ctx.pool);
  const calm = await settle();
  const common = {
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    connections,
  };
  const warm = await closedLoop({ ...common, seconds: options.warmupSeconds });
  const load1 = loadavg()[0];
  const { run, usage, answered } = await measuredClosedLoop(
    server.pid,
    { ...common, seconds: options.seconds },
    ctx.ourPids,
  );
  await waitForQuiet(ctx.pool);
  const latency = summarize(run.latencies);
  const verdict = await check(ctx.pool, rowsBefore, combined(warm, run));
  const result = {
    connections,
    rps: run.okIds.length / run.seconds,
    ...latency,
    ...usagePerRequest(usage, answered),
    load1,
    ...calm,
    ...verdict,
  };
  log(
    `${server.name} c=${connections}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99.toFixed(2)} ms, ` +
      `CPU ${result.cpuMsPerRequest.toFixed(3)} ms/req, RSS ${result.peakRssMb.toFixed(0)} MB, ${result.errors} errors`,
  );
  return result;
}

/** Open loop on one server at `rate` requests per second. */
async function openScenario(ctx, server, rate) {
  await emptyTable(ctx.pool);
  const calm = await settle();
  const load1 = loadavg()[0];
  let watcher;
  const run = await openLoop({
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    rate,
    seconds: options.openSeconds,
    warmupSeconds: options.openWarmupSeconds,
    onMeasureStart: () => (watcher = watch(server.pid, ctx.ourPids)),
  });
  const usage = watcher.stop();
  await waitForQuiet(ctx.pool);
  const served = run.latency.count;
  const verdict = await check(ctx.pool, 0, run);
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
    log(
      `${server.name} answered ${run.achievedRate.toFixed(0)}/s of ${rate.toFixed(0)}/s: overloaded`,
    );
  log(
    `${server.name} open ${rate.toFixed(0)}/s: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `p99.9 ${result.p999.toFixed(2)} ms, send lag p99 ${result.sendLagP99.toFixed(2)} ms, ${result.errors} errors`,
  );
  return result;
}

/** Waits for a calm machine before a scenario, and says so when it did not get one. */
async function settle() {
  if (options.idleWaitSeconds <= 0) return { busyBefore: NaN };
  const { waitedMs, busy } = await waitForIdleMachine({
    maxWaitMs: options.idleWaitSeconds * 1000,
  });
  if (waitedMs > 1000)
    log(
      `waited ${(waitedMs / 1000).toFixed(0)} s for the machine to calm down (now ${(busy * 100).toFixed(0)}% busy)`,
    );
  return { busyBefore: busy };
}

/** The answers of two windows on one table (a warm-up and its measured window) as one. */
function combined(a, b) {
  const sum = (field) => a[field] + b[field];
  return {
    okIds: [...a.okIds, ...b.okIds],
    failedIds: [...a.failedIds, ...b.failedIds],
    lostIds: [...a.lostIds, ...b.lostIds],
    statuses: mergeCounts(a.statuses, b.statuses),
    wrongAnswers: sum('wrongAnswers'),
    socketErrors: sum('socketErrors'),
    timeouts: sum('timeouts'),
  };
}

function mergeCounts(a, b) {
  const merged = { ...a };
  for (const [key, value] of Object.entries(b))
    merged[key] = (merged[key] ?? 0) + value;
  return merged;
}

async function pgbenchScenario(ctx, clients) {
  await emptyTable(ctx.pool);
  const calm = await settle();
  const load1 = loadavg()[0];
  // Watching the harness itself, only to see how busy everyone else was meanwhile.
  const watcher = watch(process.pid, ctx.ourPids);
  const result = await pgbench({
    url: ctx.databaseUrl,
    clients,
    seconds: options.pgbenchSeconds,
  });
  const { othersBusy } = watcher.stop();
  log(`pgbench c=${clients}: ${result.tps.toFixed(0)} tps`);
  return {
    ...result,
    rps: result.tps,
    errors: result.failed,
    load1,
    othersBusy,
    ...calm,
  };
}

/** Start-up to ready: on the external database, and on the embedded one (first, later). */
async function measureStartup(ctx) {
  const startup = {
    externalMs: [],
    externalFirstMs: [],
    embeddedFirstMs: [],
    embeddedLaterMs: [],
  };
  const hadSchema = await tableExists(ctx.pool);
  // Starts are cheap: at least 3, for a median that one slow start does not decide.
  const starts = Math.max(3, options.runs);
  for (let i = 0; i < starts + (hadSchema ? 0 : 1); i += 1) {
    const service = await startService({
      databaseUrl: ctx.databaseUrl,
      token: ctx.token,
    });
    await service.stop();
    const first = i === 0 && !hadSchema;
    (first ? startup.externalFirstMs : startup.externalMs).push(
      service.readyMs,
    );
    log(
      `start-up, external database${first ? ' (migration)' : ''}: ${service.readyMs.toFixed(0)} ms`,
    );
  }
  for (let i = 0; i < options.runs; i += 1) {
    const dataDir = await dataDirectory('plant-store-bench-embedded-');
    const embedded = { dataDir, port: await freePort() };
    try {
      for (const list of [startup.embeddedFirstMs, startup.embeddedLaterMs]) {
        const service = await startService({ token: ctx.token, embedded });
        const exit = await service.stop(30_000);
        if (exit.code !== 0)
          log(
            `the service on the embedded database exited with ${exit.code ?? exit.signal}`,
          );
        list.push(service.readyMs);
        log(
          `start-up, embedded database (${list === startup.embeddedFirstMs ? 'first' : 'later'}): ${service.readyMs.toFixed(0)} ms`,
        );
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return startup;
}

async function startPair(ctx) {
  // The service first: its migration creates the table the baseline expects.
  const service = await startService({
    databaseUrl: ctx.databaseUrl,
    token: ctx.token,
  });
  cleanups.push(() => service.stop());
  const baseline = await startBaseline({
    databaseUrl: ctx.databaseUrl,
    token: ctx.token,
  });
  cleanups.push(() => baseline.stop());
  ctx.ourPids = [service.pid, baseline.pid];
  // What each server really runs on, for the report (the same binary, unless broken).
  ctx.runtimes = {
    service: runtimeOf(service.pid),
    baseline: runtimeOf(baseline.pid),
  };
  log(
    `service on ${ctx.runtimes.service} (node ${serviceArgs(cpuProfile).slice(0, -1).join(' ')} dist/service/main.js), baseline on ${ctx.runtimes.baseline}`,
  );
  return { service, baseline };
}

async function stopPair({ service, baseline }) {
  // Both were pushed last; stopping them twice is harmless.
  cleanups.splice(cleanups.length - 2, 2);
  await Promise.all([service.stop(), baseline.stop()]);
}

async function repetition(ctx, index) {
  log(`run ${index + 1} of ${options.runs}`);
  const results = { loadStart: loadavg() };
  const pair = await startPair(ctx);
  for (const c of options.concurrency) {
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
    for (const c of options.pgbenchConcurrency)
      results[`pgbench ${c}`] = await pgbenchScenario(ctx, c);
  }
  results.servicePeakRssMb = Math.max(
    ...Object.entries(results)
      .filter(([key]) => key.startsWith('service '))
      .map(([, value]) => value.peakRssMb),
  );
  results.serviceHighWaterMb = highWaterMb(pair.service.pid);
  results.baselinePeakRssMb = highWaterMb(pair.baseline.pid);
  await stopPair(pair);
  return results;
}

async function preloadPhase(ctx) {
  const phases = [];
  if (options.preloadRows.length === 0) return phases;
  const pair = await startPair(ctx);
  await emptyTable(ctx.pool);
  let loaded = 0;
  const c = options.preloadConcurrency;
  for (const rows of options.preloadRows) {
    const label = rows >= 1_000_000 ? `${rows / 1_000_000}M` : String(rows);
    log(`preloading to ${label} rows`);
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
    log(
      `preloaded ${label} rows in ${phase.loadSeconds.toFixed(0)} s (${phase.tableSize})`,
    );
    for (let i = 0; i < options.runs; i += 1) {
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
  await stopPair(pair);
  return phases;
}

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

  const database = await openDatabase(log);
  cleanups.push(() => database.close());
  const pool = harnessPool(database.url);
  cleanups.push(() => pool.end());
  // A backend's parent is the postmaster: its processes are ours when counting others' CPU.
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const postmasterPid = postmasterOf(rows[0].pid);
  setPostmasterPid(postmasterPid);
  const ctx = {
    pool,
    postmasterPid,
    logFile: join(RESULTS, 'service.log'),
    databaseUrl: database.url,
    token: newToken(),
    workload: createWorkload({ spread: options.ids === 'random' }),
    pgbench: pgbenchVersion(),
  };
  if (!ctx.pgbench)
    log('pgbench is not on the PATH: the database reference is skipped');

  const startup = flags['skip-startup']
    ? {
        externalMs: [],
        externalFirstMs: [],
        embeddedFirstMs: [],
        embeddedLaterMs: [],
      }
    : await measureStartup(ctx);
  // The production topology first: the headline and the targets.
  const references = {};
  if (!flags['skip-references'])
    for (const topology of topologies)
      references[topology] = await referenceRounds(ctx, {
        topology,
        rounds: options.runs,
        warmupSeconds: options.warmupSeconds,
        seconds: options.referenceSeconds,
        c1Seconds: options.referenceC1Seconds,
        log,
        only: flags.references?.split(',').filter((name) => name !== ''),
        versus: flags.versus,
        serviceFlags: cpuProfile,
      });
  const only = flags['references-only'];
  const runs = [];
  if (!only)
    for (let i = 0; i < options.runs; i += 1)
      runs.push(await repetition(ctx, i));
  const preloadPhases = only ? [] : await preloadPhase(ctx);
  const postgres = await serverVersion(pool);

  const results = {
    meta: {
      date: new Date().toISOString(),
      command: [
        'npm run bench',
        ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : []),
      ].join(' '),
      ...machine(),
      database: database.embedded
        ? 'embedded PostgreSQL (temporary directory)'
        : 'DATABASE_URL',
      postgres,
      pgbench: ctx.pgbench,
      runtimes: ctx.runtimes,
      serviceNodeFlags: productionNodeFlags(ROOT),
      loadStart,
      loadEnd: loadavg(),
      busyBefore,
      elapsedSeconds: (Date.now() - started) / 1000,
    },
    options,
    startup,
    references,
    runs,
    preload: preloadPhases,
  };
  await cleanUp();

  const report = formatReport(results);
  process.stdout.write(`\n${report}\n`);
  // An A/B, a partial set of references or a profiled run is not the service's latest run.
  const partial =
    flags.versus !== undefined ||
    flags.references !== undefined ||
    flags.topology !== 'both' ||
    flags['cpu-prof'] ||
    flags['skip-startup'];
  if (!partial) await writeResults(join(BENCH, 'RESULTS.md'), report);
  // Every figure of the run, for whoever wants more than the table (not committed).
  await writeFile(
    join(RESULTS, 'latest.json'),
    JSON.stringify(results, null, 2),
  );
  log(
    partial
      ? 'written to bench/results/latest.json (an A/B, partial or profiled run: RESULTS.md unchanged)'
      : 'written to bench/RESULTS.md and bench/results/latest.json',
  );
}

main().catch(async (error) => {
  log(`failed: ${error.stack ?? error}`);
  await cleanUp();
  process.exit(1);
});
