// How long plant-store/testing takes another team's suite: startPlantStore() from spawn to
// ready, the first on a machine (a fresh cache folder, so initdb) and later ones (a copy of
// the template), and store.reset() on a store with plants in it. With --before, the same
// starts of another build's kit (before the template: initdb at each start), alternated
// with this one's so that the machine's other work weighs on both alike. Prints medians,
// every figure, and the machine and its load; records nothing.
//
//   npm run build && node bench/scenarios/test-kit-start.mjs [--runs 10] [--cold-runs 3]
//       [--resets 20] [--before /tmp/before/dist]
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { commandLine, logger } from '../lib/cli.mjs';
import { machineDescription } from '../lib/machine.mjs';
import { ROOT } from '../lib/paths.mjs';
import { median } from '../lib/stats.mjs';

const options = commandLine({
  numbers: { runs: 10, 'cold-runs': 3, resets: 20 },
  strings: { before: undefined },
});
const log = logger('test-kit');

async function kitOf(dist) {
  const entry = pathToFileURL(join(dist, 'service', 'testing', 'index.js'));
  return (await import(entry.href)).startPlantStore;
}

async function cpuPressure() {
  const text = await readFile('/proc/pressure/cpu', 'utf8').catch(() => '');
  return /avg60=([\d.]+)/.exec(text)?.[1] ?? 'n/a';
}

/** Milliseconds from the call to the resolved store; the store is stopped after. */
async function timedStart(start, startOptions) {
  const begun = performance.now();
  const store = await start(startOptions);
  const ms = performance.now() - begun;
  await store.stop();
  return ms;
}

const round = (ms) => Math.round(ms);
const current = await kitOf(join(ROOT, 'dist'));
const before =
  options.before === undefined ? undefined : await kitOf(options.before);
const cacheRoot = await mkdtemp(join(tmpdir(), 'plant-store-kit-bench-'));
// As root the template's PostgreSQL runs as `postgres`, which must pass through it.
await chmod(cacheRoot, 0o755);
const at = { start: new Date().toISOString(), load: loadavg()[0] };
const figures = { cold: [], warm: [], before: [], reset: [] };
try {
  for (let run = 1; run <= options['cold-runs']; run += 1) {
    const cacheDir = join(cacheRoot, `cold-${run}`);
    figures.cold.push(await timedStart(current, { cacheDir }));
    log(`cold ${run}: ${round(figures.cold.at(-1))} ms`);
  }
  const cacheDir = join(cacheRoot, 'cold-1');
  for (let run = 1; run <= options.runs; run += 1) {
    figures.warm.push(await timedStart(current, { cacheDir }));
    if (before !== undefined) figures.before.push(await timedStart(before));
    log(
      `run ${run}: ${round(figures.warm.at(-1))} ms` +
        (before === undefined ? '' : `, before ${round(figures.before.at(-1))} ms`),
    );
  }
  const store = await current({ cacheDir });
  const sql = new pg.Client({ connectionString: store.databaseUrl });
  await sql.connect();
  try {
    await store.reset();
    for (let reset = 1; reset <= options.resets; reset += 1) {
      await sql.query(
        "INSERT INTO plants (id, name) SELECT g, 'Fern' FROM generate_series(1, 1000) AS g",
      );
      const begun = performance.now();
      await store.reset();
      figures.reset.push(performance.now() - begun);
    }
  } finally {
    await sql.end();
    await store.stop();
  }
} finally {
  await rm(cacheRoot, { recursive: true, force: true });
}

const summary = (values) =>
  values.length === 0
    ? undefined
    : { medianMs: round(median(values)), eachMs: values.map(round) };
process.stdout.write(
  `${JSON.stringify(
    {
      machine: machineDescription(),
      started: at.start,
      finished: new Date().toISOString(),
      loadBefore: at.load,
      loadAfter: loadavg()[0],
      cpuPressureAvg60After: await cpuPressure(),
      command: process.argv.slice(1).join(' '),
      cold: summary(figures.cold),
      warm: summary(figures.warm),
      before: summary(figures.before),
      resetWith1000Plants: {
        medianMs: Math.round(median(figures.reset) * 10) / 10,
        maxMs: round(Math.max(...figures.reset)),
      },
    },
    null,
    2,
  )}\n`,
);
