// Issue 23's comparison: the service beside the references it is judged against, in the
// same rounds, at c=64 from wrk pinned to one core while the servers and PostgreSQL share
// the other (as if the clients were on another machine):
//   - the service as production starts it (npm run start:prod), and as `node dist/main.js`
//     with no flags (how most Nest images start it): the peak RSS target holds for both;
//   - the baseline, node:http + pg with one INSERT per request;
//   - the grouping baseline (the same, GROUP_INSERTS=1): the ceiling of this stack;
//   - the docs-style app: the contract as the NestJS docs teach it;
//   - a server that answers at once: the generator's own ceiling, which must stay far
//     above what the fastest server reaches, or the figures measure wrk.
// Each server starts fresh for its turn (its peak RSS is its own), the order rotates per
// round, and each turn is checked against the table.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { productionNodeFlags } from '../../test-kit/node-process.mjs';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { countRows, emptyTable, waitForQuiet } from './database.mjs';
import {
  BARE_REFUSAL_SERVER,
  BASELINE_SERVER,
  BENCH,
  RESULTS,
  ROOT,
  SERVICE_MAIN,
} from './paths.mjs';
import { serviceArgs, startServer } from './servers.mjs';
import { median } from './stats.mjs';
import { watch } from './usage.mjs';
import { wrkAvailable, wrkClosedLoop } from './wrk.mjs';

const CONNECTIONS = 64;
const GENERATOR_CPU = 0;
const SERVER_CPUS = '1';
const ALL_CPUS = '0,1';

/** The servers of one round, by name: how each is started. */
const REFERENCES = {
  service: { args: serviceArgs() },
  'service, no flags': { args: [SERVICE_MAIN] },
  baseline: { args: [BASELINE_SERVER] },
  grouping: { args: [BASELINE_SERVER], env: { GROUP_INSERTS: '1' } },
  'docs-style': { args: [join(RESULTS, 'servers', 'docs-style-app.js')] },
};

/** Compiles the docs-style app (TypeScript, decorators) into bench/results/servers. */
function buildDocsStyleApp() {
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-p', join(BENCH, 'servers', 'tsconfig.json')],
    { cwd: ROOT, stdio: ['ignore', 2, 2] },
  );
}

async function turn(ctx, name, spec, { warmupSeconds, seconds }) {
  const server = await startServer({
    name,
    args: spec.args,
    env: {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      SHUTDOWN_DELAY_MS: '0',
      ...spec.env,
    },
    logFile: ctx.logFile,
  });
  try {
    pinProcessTree(server.pid, SERVER_CPUS);
    pinProcessTree(ctx.postmasterPid, SERVER_CPUS);
    const load = {
      url: server.url,
      token: ctx.token,
      connections: CONNECTIONS,
      cpu: GENERATOR_CPU,
    };
    await emptyTable(ctx.pool);
    await wrkClosedLoop({ ...load, seconds: warmupSeconds });
    // The warm-up's last requests may still be committing.
    await waitForQuiet(ctx.pool);
    const rowsBefore = await countRows(ctx.pool);
    const watcher = watch(server.pid, [server.pid]);
    const run = await wrkClosedLoop({ ...load, seconds });
    const usage = watcher.stop();
    await waitForQuiet(ctx.pool);
    const rowsAdded = (await countRows(ctx.pool)) - rowsBefore;
    // Every 200 is a row; at most the requests in flight when wrk stopped are rows
    // without an answer counted.
    const integrity =
      run.non2xx === 0 &&
      run.socketErrors === 0 &&
      rowsAdded >= run.ok &&
      rowsAdded <= run.ok + CONNECTIONS;
    return {
      rps: run.rps,
      p50: run.p50,
      p99: run.p99,
      cpuUsPerRequest: (usage.cpuSeconds * 1e6) / run.requests,
      peakRssMb: usage.peakRssMb,
      errors: run.non2xx + run.socketErrors + (integrity ? 0 : 1),
      rowsAdded,
      ok: run.ok,
    };
  } finally {
    await server.stop();
    pinProcessTree(ctx.postmasterPid, ALL_CPUS);
  }
}

/** What wrk alone can offer: a server that answers every request at once. */
async function generatorCeiling(ctx, seconds) {
  const server = await startServer({
    name: 'answers at once',
    args: [BARE_REFUSAL_SERVER],
  });
  try {
    pinProcessTree(server.pid, SERVER_CPUS);
    const run = await wrkClosedLoop({
      url: server.url,
      token: ctx.token,
      connections: CONNECTIONS,
      cpu: GENERATOR_CPU,
      seconds,
    });
    return run.offeredRps;
  } finally {
    await server.stop();
  }
}

/**
 * The Node flags of `npm run start:prod` in the project a build's dist/ belongs to: an
 * older build (before issue 23) had its V8 flags there rather than adding them itself.
 */
function startFlagsOfBuild(dist) {
  const root = join(dist, '..');
  return existsSync(join(root, 'package.json'))
    ? productionNodeFlags(root)
    : [];
}

/**
 * The servers of a run: the references, or those named in `only`, and with `versus` (a
 * build's dist/ directory) a second service started as its project's start:prod starts
 * it, measured in the same rounds: an A/B of two builds on the targets' own measurement.
 */
function serversOf({ only, versus }) {
  const servers = { ...REFERENCES };
  if (versus !== undefined)
    servers.versus = {
      // Its own project's flags only: serviceArgs would put this project's first.
      args: [...startFlagsOfBuild(versus), join(versus, 'main.js')],
    };
  if (only === undefined) return servers;
  const wanted = new Set(['service', 'grouping', ...only]);
  if (versus !== undefined) wanted.add('versus');
  return Object.fromEntries(
    Object.entries(servers).filter(([name]) => wanted.has(name)),
  );
}

/**
 * `rounds` rounds of every server; null when wrk or taskset is missing (install wrk:
 * `apt-get install wrk`).
 */
export async function referenceRounds(
  ctx,
  { rounds, warmupSeconds, seconds, log, only, versus },
) {
  if (!wrkAvailable()) {
    log('wrk or taskset is not on the PATH: the references are skipped');
    return null;
  }
  const SERVERS = serversOf({ only, versus });
  if ('docs-style' in SERVERS) buildDocsStyleApp();
  const names = Object.keys(SERVERS);
  const results = Object.fromEntries(names.map((name) => [name, []]));
  const ceilings = [];
  for (let round = 0; round < rounds; round += 1) {
    ceilings.push(await generatorCeiling(ctx, warmupSeconds));
    log(
      `references round ${round + 1}: wrk alone offers ${ceilings.at(-1).toFixed(0)} req/s`,
    );
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const result = await turn(ctx, name, SERVERS[name], {
        warmupSeconds,
        seconds,
      });
      results[name].push(result);
      log(
        `references round ${round + 1}, ${name}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99.toFixed(1)} ms, ` +
          `CPU ${result.cpuUsPerRequest.toFixed(0)} us/req, peak RSS ${result.peakRssMb.toFixed(0)} MB, ${result.errors} errors`,
      );
    }
  }
  return { connections: CONNECTIONS, seconds, ceilings, results };
}

/** Median of a field over the rounds of one server. */
const med = (references, name, field) =>
  median(references.results[name].map((round) => round[field]));

/** Median over the rounds of the per-round ratio a/b of one field. */
const ratio = (references, a, b, field) =>
  median(
    references.results[a].map(
      (round, i) => round[field] / references.results[b][i][field],
    ),
  );

/** Issue 23's targets, each a ratio within the same rounds. */
export function referenceTargets(references) {
  const fastest = Math.max(
    ...Object.keys(references.results).map((name) =>
      med(references, name, 'rps'),
    ),
  );
  const rss = (name) =>
    Math.max(...references.results[name].map((r) => r.peakRssMb));
  const errors = Object.values(references.results)
    .flat()
    .reduce((sum, r) => sum + r.errors, 0);
  // Each value is worked out only when the servers it compares ran.
  const list = [
    {
      needs: 'grouping',
      target: 'CPU per request ≤ 2x the grouping baseline',
      value: () => ratio(references, 'service', 'grouping', 'cpuUsPerRequest'),
      limit: 2,
      atMost: true,
    },
    {
      needs: 'grouping',
      target: 'c=64 throughput ≥ 0.5x the grouping baseline',
      value: () => ratio(references, 'service', 'grouping', 'rps'),
      limit: 0.5,
    },
    {
      needs: 'docs-style',
      target: 'c=64 throughput ≥ 2.5x the docs-style app',
      value: () => ratio(references, 'service', 'docs-style', 'rps'),
      limit: 2.5,
    },
    {
      target: 'peak RSS ≤ 200 MB, npm run start:prod (MB, worst round)',
      value: () => rss('service'),
      limit: 200,
      atMost: true,
    },
    {
      needs: 'service, no flags',
      target: 'peak RSS ≤ 200 MB, node dist/main.js (MB, worst round)',
      value: () => rss('service, no flags'),
      limit: 200,
      atMost: true,
    },
    {
      target:
        'the generator is not the bottleneck: fastest server / wrk alone ≤ 0.7',
      value: () => fastest / median(references.ceilings),
      limit: 0.7,
      atMost: true,
    },
    {
      target: 'no errors in any turn',
      value: () => errors,
      limit: 0,
      atMost: true,
    },
  ];
  return list
    .filter(({ needs }) => needs === undefined || needs in references.results)
    .map(({ value: valueOf, ...t }) => {
      const value = valueOf();
      return {
        ...t,
        value,
        met: t.atMost ? value <= t.limit : value >= t.limit,
      };
    });
}

/** With `--versus`: the second build over the first, per round and their median. */
function formatVersus(references) {
  if (!('versus' in references.results)) return [];
  const perRound = (field) =>
    references.results.versus
      .map((round, i) =>
        (round[field] / references.results.service[i][field]).toFixed(3),
      )
      .join(' ');
  return [
    '',
    '| versus / service, per round | median | each round |',
    '| --- | ---: | --- |',
    ...['cpuUsPerRequest', 'rps', 'peakRssMb'].map(
      (field) =>
        `| ${field} | ${ratio(references, 'versus', 'service', field).toFixed(3)} | ${perRound(field)} |`,
    ),
  ];
}

/** The table and targets of the references, as markdown. */
export function formatReferences(references) {
  const names = Object.keys(references.results);
  const rows = names.map((name) => {
    const f = (field, digits) => med(references, name, field).toFixed(digits);
    return `| ${name} | ${Number(f('rps', 0)).toLocaleString('en-US')} | ${f('p99', 1)} | ${f('cpuUsPerRequest', 0)} | ${f('peakRssMb', 0)} | ${ratio(references, name, 'grouping', 'rps').toFixed(2)} | ${ratio(references, name, 'grouping', 'cpuUsPerRequest').toFixed(2)} |`;
  });
  const targets = referenceTargets(references).map(
    ({ target, value, met }) =>
      `| ${target} | ${Number.isInteger(value) ? value : value.toFixed(2)} | ${met ? 'met' : '**missed**'} |`,
  );
  return [
    `c=${references.connections}, wrk on core ${GENERATOR_CPU}, servers and PostgreSQL on core ${SERVER_CPUS}, ` +
      `${references.seconds} s per turn, ${references.results.service.length} rounds, medians; ` +
      `wrk alone offered ${references.ceilings.map((c) => c.toFixed(0)).join(', ')} req/s.`,
    '',
    '| server | req/s | p99 ms | CPU us/req | peak RSS MB | req/s vs grouping | CPU/req vs grouping |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    '| target (issue 23) | value | |',
    '| --- | ---: | --- |',
    ...targets,
    ...formatVersus(references),
  ].join('\n');
}
