// Turns the measurements of a run into the one table, the targets, and bench/RESULTS.md.
import { readFile, writeFile } from 'node:fs/promises';
import { formatReferences, TOPOLOGIES } from './references.mjs';
import { median } from './stats.mjs';

const HISTORY_HEADING = '## History / notes';
// Beyond this share of the machine used by other processes, a figure is suspect.
const DISTURBED = 0.2;

const fixed = (value, digits) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value === Infinity
      ? '∞'
      : value.toFixed(digits);
const ms = (value) => fixed(value, value >= 100 ? 0 : value >= 10 ? 1 : 2);
const percent = (value) =>
  Number.isFinite(value) ? `${(value * 100).toFixed(0)}%` : '–';
const ratio = (value) =>
  Number.isFinite(value) ? `${value.toFixed(2)}x` : '–';

/** Median over the runs of one field of one scenario (missing in a run: skipped). */
function medianOf(runs, key, field) {
  return median(
    runs.map((run) => run[key]?.[field]).filter((value) => value !== undefined),
  );
}

/** Median over the runs of a per-run ratio, so every ratio compares figures of one run. */
function medianRatio(runs, key, baseKey, field, inverse = false) {
  return median(
    runs
      .filter((run) => run[key] !== undefined && run[baseKey] !== undefined)
      .map((run) =>
        inverse
          ? run[baseKey][field] / run[key][field]
          : run[key][field] / run[baseKey][field],
      ),
  );
}

/**
 * The rows of the table: one per scenario and target, medians over the runs, and for
 * every row its ratio to the baseline in the same run and the same scenario.
 */
export function tableRows(results) {
  const rows = [];
  const add = (label, runs, key, baseKey, extra = {}) => {
    if (!runs.some((run) => run[key] !== undefined)) return;
    rows.push({
      label,
      key,
      rps: medianOf(runs, key, 'rps'),
      p50: medianOf(runs, key, 'p50'),
      p99: medianOf(runs, key, 'p99'),
      p999: medianOf(runs, key, 'p999'),
      errors: runs.reduce((sum, run) => sum + (run[key]?.errors ?? 0), 0),
      rssMb: medianOf(runs, key, 'peakRssMb'),
      cpuMs: medianOf(runs, key, 'cpuMsPerRequest'),
      rpsRatio: baseKey ? medianRatio(runs, key, baseKey, 'rps') : NaN,
      p99Ratio: baseKey ? medianRatio(runs, key, baseKey, 'p99') : NaN,
      cpuRatio: baseKey
        ? medianRatio(runs, key, baseKey, 'cpuMsPerRequest')
        : NaN,
      load: medianOf(runs, key, 'load1'),
      others: medianOf(runs, key, 'othersBusy'),
      ...extra,
    });
  };
  const { runs, options } = results;
  for (const c of options.concurrency) {
    add(`closed c=${c}`, runs, `baseline closed ${c}`, null, {
      target: 'baseline',
    });
    add(`closed c=${c}`, runs, `service closed ${c}`, `baseline closed ${c}`, {
      target: 'service',
    });
  }
  for (const [suffix, what] of [
    ['', '½ baseline c=64'],
    [' half-service', '½ service c=64'],
  ]) {
    const rate = median(
      runs.map((run) => run[`baseline open${suffix}`]?.rate ?? NaN),
    );
    const label = `open ${fixed(rate, 0)}/s (${what})`;
    add(label, runs, `baseline open${suffix}`, null, { target: 'baseline' });
    add(label, runs, `service open${suffix}`, `baseline open${suffix}`, {
      target: 'service',
    });
  }
  for (const c of options.pgbenchConcurrency)
    add(`closed c=${c}`, runs, `pgbench ${c}`, `baseline closed ${c}`, {
      target: 'pgbench (INSERT only)',
    });
  for (const { label, runs: preloadRuns } of results.preload) {
    const c = options.preloadConcurrency;
    add(`${label} rows, c=${c}`, preloadRuns, `baseline closed ${c}`, null, {
      target: 'baseline',
    });
    add(
      `${label} rows, c=${c}`,
      preloadRuns,
      `service closed ${c}`,
      `baseline closed ${c}`,
      {
        target: 'service',
      },
    );
  }
  return rows;
}

export function formatTable(rows) {
  const header =
    '| scenario | server | req/s | p50 ms | p99 ms | p99.9 ms | errors | peak RSS MB | CPU ms/req | req/s vs baseline | p99 vs baseline | CPU/req vs baseline | load | others CPU |\n' +
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map(
    (row) =>
      `| ${row.label} | ${row.target} | ${fixed(row.rps, 0)} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.p999)} | ${row.errors} | ${fixed(row.rssMb, 0)} | ${fixed(row.cpuMs, 3)} | ${ratio(row.rpsRatio)} | ${ratio(row.p99Ratio)} | ${ratio(row.cpuRatio)} | ${fixed(row.load, 2)} | ${percent(row.others)}${row.others > DISTURBED ? ' ⚠' : ''} |`,
  );
  return [header, ...lines].join('\n');
}

/** Each target of the issue, met or not, with the measured value. */
export function targets(results) {
  const { runs } = results;
  const c = 64;
  const verdict = (ok) =>
    ok === undefined ? 'not measured' : ok ? 'met' : 'NOT met';
  const list = [];

  // Throughput, CPU per request, the c=1 latency and the peak RSS are judged in the
  // production topology (lib/references.mjs): here every process floats over both cores.
  const p99Ratio = medianRatio(runs, 'service open', 'baseline open', 'p99');
  const p99 = medianOf(runs, 'service open', 'p99');
  const baseP99 = medianOf(runs, 'baseline open', 'p99');
  const rate = median(runs.map((run) => run['service open']?.rate ?? NaN));
  const overloaded = runs.filter(
    (run) =>
      run['service open']?.keptUp === false ||
      run['baseline open']?.keptUp === false,
  ).length;
  list.push({
    target:
      'p99 at a constant rate of half the baseline capacity ≤ 3x baseline p99',
    measured:
      `${ratio(p99Ratio)} (${ms(p99)} ms vs ${ms(baseP99)} ms at ${fixed(rate, 0)}/s)` +
      (overloaded
        ? `; in ${overloaded} run(s) a server did not keep up with the rate`
        : ''),
    ok: Number.isNaN(p99Ratio) ? undefined : p99Ratio <= 3,
  });

  const big = results.preload.find((phase) => phase.rows === 10_000_000);
  const bigRps = big ? medianOf(big.runs, `service closed ${c}`, 'rps') : NaN;
  const emptyRps = medianOf(runs, `service closed ${c}`, 'rps');
  const growth = bigRps / emptyRps;
  // The baseline's own loss says how much of the growth is the database's: a service
  // slower than the database hides it.
  const baseGrowth = big
    ? medianOf(big.runs, `baseline closed ${c}`, 'rps') /
      medianOf(runs, `baseline closed ${c}`, 'rps')
    : NaN;
  list.push({
    target: `10M rows preloaded: throughput (c=${c}) within 15% of the empty table`,
    measured: big
      ? `${ratio(growth)} of empty (${fixed(bigRps, 0)} vs ${fixed(emptyRps, 0)} req/s); baseline ${ratio(baseGrowth)}`
      : 'skipped',
    ok: big && Number.isFinite(growth) ? growth >= 0.85 : undefined,
  });

  const startup = median(results.startup.externalMs);
  list.push({
    target: 'start-up to ready, external database < 1.5 s',
    measured: `${fixed(startup / 1000, 2)} s`,
    ok: Number.isFinite(startup) ? startup < 1500 : undefined,
  });

  // Every service scenario of every run, preloaded ones included.
  const serviceScenarios = [
    ...runs.flatMap((run) =>
      Object.entries(run).filter(([key]) => key.startsWith('service ')),
    ),
    ...results.preload.flatMap((phase) =>
      phase.runs.flatMap((run) =>
        Object.entries(run).filter(([key]) => key.startsWith('service ')),
      ),
    ),
  ];
  const integrity = serviceScenarios.reduce(
    (sum, [, value]) => sum + (value.integrityErrors ?? 0),
    0,
  );
  list.push({
    target:
      'correctness: every 200 is a row with the body sent, nothing else written (service, every scenario)',
    measured: `${integrity} mismatches`,
    ok: integrity === 0,
  });
  const failing = serviceScenarios.filter(([, value]) => value.errors > 0);
  const errorCount = failing.reduce((sum, [, value]) => sum + value.errors, 0);
  const where = failing
    .map(
      ([key, value]) =>
        `${value.errors} in ${key}${value.keptUp === false ? ' (overloaded)' : ''}`,
    )
    .join('; ');
  list.push({
    target: 'no errors (service, every scenario)',
    measured: `${errorCount} errors${where ? `: ${where}` : ''}`,
    ok: errorCount === 0,
  });
  return list.map((item) => ({ ...item, verdict: verdict(item.ok) }));
}

export function formatTargets(list) {
  return [
    '| target | measured (median of runs) | verdict |',
    '|---|---|---|',
    ...list.map(
      (item) => `| ${item.target} | ${item.measured} | ${item.verdict} |`,
    ),
  ].join('\n');
}

function formatStartup(startup) {
  const line = (label, values) =>
    `| ${label} | ${values.length ? fixed(median(values), 0) : '–'} | ${values.map((v) => fixed(v, 0)).join(', ')} |`;
  return [
    '| start-up to ready (spawn to first 200 from /health) | median ms | each run, ms |',
    '|---|---:|---|',
    line('external database, schema present', startup.externalMs),
    line(
      'external database, first start (runs the migration)',
      startup.externalFirstMs,
    ),
    line('embedded database, first start (initdb)', startup.embeddedFirstMs),
    line('embedded database, later start', startup.embeddedLaterMs),
  ].join('\n');
}

function formatDetails(results) {
  const lines = [];
  results.runs.forEach((run, index) => {
    lines.push(
      `- run ${index + 1}: load ${run.loadStart.map((v) => v.toFixed(2)).join(' ')} at start; ` +
        `service peak RSS ${fixed(run.servicePeakRssMb, 0)} MB, baseline ${fixed(run.baselinePeakRssMb, 0)} MB; ` +
        `open-loop rate ${fixed(run['baseline open']?.rate, 0)}/s`,
    );
    for (const [key, value] of Object.entries(run)) {
      if (value === null || typeof value !== 'object' || !('rps' in value))
        continue;
      lines.push(`  - ${key}: ${describeScenario(value)}`);
    }
  });
  for (const phase of results.preload) {
    lines.push(
      `- ${phase.label} rows preloaded (${phase.tableSize} with index, loaded in ${fixed(phase.loadSeconds, 0)} s):`,
    );
    phase.runs.forEach((run, index) => {
      for (const [key, value] of Object.entries(run))
        lines.push(`  - run ${index + 1}, ${key}: ${describeScenario(value)}`);
    });
  }
  return lines.join('\n');
}

function describeScenario(s) {
  if (s.tps !== undefined)
    return `${fixed(s.rps, 0)} tps, average latency ${ms(s.latencyAverageMs)} ms, ${s.errors} failed, load ${fixed(s.load1, 2)}, others ${percent(s.othersBusy)}`;
  const parts = [
    `${fixed(s.rps, 0)} req/s`,
    `p50/p99/p99.9/max ${ms(s.p50)}/${ms(s.p99)}/${ms(s.p999)}/${ms(s.max)} ms`,
    `CPU ${fixed(s.cpuMsPerRequest, 3)} ms/req (main thread ${fixed(s.mainThreadCpuMsPerRequest, 3)})`,
    `peak RSS ${fixed(s.peakRssMb, 0)} MB`,
    `machine busy ${percent(s.machineBusy)} (others ${percent(s.othersBusy)})`,
    `load ${fixed(s.load1, 2)}`,
  ];
  if (s.achievedRate !== undefined)
    parts.push(
      `achieved ${fixed(s.achievedRate, 0)}/s, send lag p99 ${ms(s.sendLagP99)} ms, max outstanding ${s.maxOutstanding}`,
    );
  parts.push(
    `${s.errors} errors${s.errors ? ` (${JSON.stringify(s.errorDetail)})` : ''}`,
  );
  if (s.unansweredRows)
    parts.push(`${s.unansweredRows} rows for requests cut off at the end`);
  return parts.join(', ');
}

/** The heading of the "latest run" section: when, where, how. */
function head(meta, options) {
  return [
    `## Latest run${options.note ? ` (${options.note})` : ''}`,
    '',
    `- Date: ${meta.date}`,
    `- Command: \`${meta.command}\``,
    `- Machine: ${meta.cores} cores (${meta.cpuModel}), ${meta.memoryGiB.toFixed(1)} GiB, ${meta.os}`,
    `- Runtime (asked of each server process's own executable): service ${meta.runtimes?.service ?? 'not recorded'}${meta.serviceNodeFlags?.length ? ` started with \`${meta.serviceNodeFlags.join(' ')}\` (as \`npm run start:prod\`)` : ''}, baseline ${meta.runtimes?.baseline ?? 'not recorded'}; load generator ${meta.node}`,
    `- Database: ${meta.database} — ${meta.postgres}`,
    `- pgbench: ${meta.pgbench ?? 'not on the PATH (reference skipped)'}`,
    `- Load average (1/5/15 min): ${meta.loadStart.map((v) => v.toFixed(2)).join(' ')} at start, ${meta.loadEnd.map((v) => v.toFixed(2)).join(' ')} at end; machine ${fixed(meta.busyBefore * 100, 0)}% busy in the second before the run`,
    `- ${options.runs} run(s), medians shown. Closed loop: ${options.warmupSeconds} s warm-up + ${options.seconds} s measured per scenario. ` +
      `Open loop: ${options.openWarmupSeconds} s + ${options.openSeconds} s at half the baseline's c=64 throughput of the same run. ` +
      `pgbench: ${options.pgbenchSeconds} s. Ids: ${options.ids}. Waited up to ${options.idleWaitSeconds} s before each scenario for a calm machine. Took ${fixed(meta.elapsedSeconds / 60, 1)} min.`,
    '',
  ];
}

/**
 * The references in each topology measured: production first, with the targets (the
 * headline), then co-located, which shows what a database on the server's host does.
 */
function formatTopologies(references = {}) {
  const notes = {
    production:
      'The database and the clients as other machines, as production runs it: the targets read from this table.',
    'co-located':
      "A database on the server's host: every round trip costs the server's own core, which favours a server " +
      'that groups its inserts. Shown for what it is, not judged.',
  };
  return Object.keys(TOPOLOGIES)
    .filter((name) => references[name] != null)
    .flatMap((name) => [
      `### ${TOPOLOGIES[name].title}`,
      '',
      notes[name],
      '',
      formatReferences(references[name], {
        withTargets: name === 'production',
      }),
      '',
    ]);
}

/** Issue 43's ceilings: CPU per create over tracing off's, in the same round. */
const TRACING_TARGETS = { 'on, 100%': 1.15, 'on, 1%': 1.03 };

/** The tracing cost's rounds (tracing-cost.mjs), with issue 43's targets. */
function formatTracing(tracing) {
  if (!tracing) return [];
  const rows = tracing.summary.map(
    ({ name, cpuUsPerCreate, ratioToOff, ratios }) => {
      const target = TRACING_TARGETS[name];
      const verdict =
        target === undefined
          ? ''
          : ratioToOff <= target
            ? `≤ ${target}: met`
            : `≤ ${target}: **missed**`;
      return `| ${name} | ${fixed(cpuUsPerCreate, 0)} | ${fixed(ratioToOff, 3)} | ${ratios.map((x) => fixed(x, 3)).join(', ')} | ${verdict} |`;
    },
  );
  return [
    '### Tracing (issue 43)',
    '',
    `Each variant beside tracing off, both services on core 1 at once (the load and PostgreSQL on core 0, as in the production topology), c=${tracing.connections} each, ${tracing.warmupSeconds} s of warm-up and ${tracing.seconds} s measured over the same windows, ${tracing.rounds} rounds in rotating order; each variant's CPU per create over tracing off's beside it, the median of the rounds. Off's row is the median of its sides.`,
    '',
    '| tracing | CPU us/create | × off | each round | target |',
    '| --- | ---: | ---: | --- | --- |',
    ...rows,
    '',
  ];
}

/** The whole "latest run" section, as printed and as written to RESULTS.md. */
export function formatReport(results) {
  const { meta, options } = results;
  const references = formatTopologies(results.references);
  const startup = ['### Start-up', '', formatStartup(results.startup), ''];
  const tracing = formatTracing(results.tracing);
  if (results.runs.length === 0)
    return [...head(meta, options), ...references, ...tracing, ...startup].join(
      '\n',
    );
  return [
    ...head(meta, options),
    ...references,
    ...tracing,
    ...startup,
    '### Every process floating over both cores: load curves, open loop, preloaded tables',
    '',
    "The load generator (autocannon, in the benchmark's own process), the servers and the database",
    'float over the same two cores: every figure here is for this machine as a whole, and the ratios',
    'to the baseline are what to compare.',
    '',
    formatTable(tableRows(results)),
    '',
    '"load" is the 1-minute load average when the measurement started (it counts this',
    'benchmark\'s own processes); "others CPU" is the share of the whole machine used by',
    `processes that are not this benchmark's during the measurement (⚠ above ${DISTURBED * 100}%: a`,
    'figure taken while someone else was busy on the machine).',
    '',
    '### Checks of these scenarios',
    '',
    formatTargets(targets(results)),
    '',
    '### Details per run',
    '',
    formatDetails(results),
    '',
  ].join('\n');
}

/** Writes the latest run into RESULTS.md, keeping the hand-written history below it. */
export async function writeResults(path, report) {
  const previous = await readFile(path, 'utf8').catch(() => '');
  const at = previous.indexOf(HISTORY_HEADING);
  const history =
    at >= 0
      ? previous.slice(at)
      : `${HISTORY_HEADING}\n\nHand-written notes on earlier runs go here; \`npm run bench\` keeps this section.\n`;
  const text = [
    '# Benchmark results',
    '',
    '<!-- Everything above "History / notes" is rewritten by `npm run bench` (bench/scenarios/run.mjs). -->',
    '',
    report.trimEnd(),
    '',
    history.trimEnd(),
    '',
  ].join('\n');
  await writeFile(path, text);
}
