// The service beside the references it is judged against, in the same rounds, at c=64
// (then c=1) from wrk pinned to one core, in one of two topologies (TOPOLOGIES below):
// production, each server alone on its core, and co-located, the server sharing its core
// with PostgreSQL. The servers:
//   - the service as production starts it (npm run start:prod), and as `node dist/service/main.js`
//     with no flags (how most Nest images start it): the peak RSS target holds for both;
//   - the baseline, node:http + pg with one INSERT per request;
//   - the grouping baseline (the same, GROUP_INSERTS=1): the ceiling of this stack;
//   - the docs-style app: the contract as the NestJS docs teach it;
//   - the service and the docs-style app on Fastify (HTTP_ADAPTER=fastify), each judged
//     against the other on its own adapter;
//   - a server that answers at once: the generator's own ceiling, which must stay far
//     above what the fastest server reaches, or the figures measure wrk.
// Each server starts fresh for its turn (its peak RSS is its own), the order rotates per
// round, and each turn is checked against the table.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { productionNodeFlags } from '../../test-kit/node-process.mjs';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { countRows, emptyTable, waitForQuiet } from './database.mjs';
import { buildDocsStyleApp, DOCS_STYLE_APP } from './docs-style-app.mjs';
import { coreTicks } from './machine.mjs';
import {
  BARE_REFUSAL_SERVER,
  BASELINE_SERVER,
  SERVICE_MAIN,
  serviceMainOf,
} from './paths.mjs';
import { benchmarkSettings, serviceArgs, startServer } from './servers.mjs';
import { median } from './stats.mjs';
import { watch } from './usage.mjs';
import { wrkAvailable, wrkClosedLoop } from './wrk.mjs';

const CONNECTIONS = 64;
const ALL_CPUS = '0,1';

/**
 * Where each process runs. In production the database and the clients are other
 * machines: the server has its core to itself, and wrk and PostgreSQL share the other
 * (which carried the grouping server's 22,000 req/s, so it is not the limit: each turn
 * says how busy it was). Co-located, PostgreSQL shares the server's core, as a database on
 * the same host would: every round trip then costs the server's own core, which favours
 * a server that groups its inserts (issue 32). The targets read from production.
 */
export const TOPOLOGIES = {
  production: {
    generator: '0',
    server: '1',
    database: '0',
    title:
      'Production topology: each server alone on its core, wrk and PostgreSQL on the other',
  },
  'co-located': {
    generator: '0',
    server: '1',
    database: '1',
    title:
      "Co-located topology: PostgreSQL on the server's core (a database on the same host), wrk on the other",
  },
};

/** The servers of one round, by name: how each is started. */
const REFERENCES = {
  service: { args: serviceArgs() },
  'service, no flags': { args: [SERVICE_MAIN] },
  baseline: { args: [BASELINE_SERVER] },
  grouping: { args: [BASELINE_SERVER], env: { GROUP_INSERTS: '1' } },
  'docs-style': { args: [DOCS_STYLE_APP] },
  'service on fastify': {
    args: serviceArgs(),
    env: { HTTP_ADAPTER: 'fastify' },
  },
  'docs-style on fastify': {
    args: [DOCS_STYLE_APP],
    env: { HTTP_ADAPTER: 'fastify' },
  },
};

async function turn(
  ctx,
  name,
  spec,
  { topology, warmupSeconds, seconds, c1Seconds },
) {
  const server = await startServer({
    name,
    args: spec.args,
    env: benchmarkSettings(ctx.databaseUrl, ctx.token, spec.env),
    logFile: ctx.logFile,
  });
  try {
    pinProcessTree(server.pid, topology.server);
    pinProcessTree(ctx.postmasterPid, topology.database);
    const load = {
      url: server.url,
      token: ctx.token,
      connections: CONNECTIONS,
      cpu: topology.generator,
    };
    await emptyTable(ctx.pool);
    await wrkClosedLoop({ ...load, seconds: warmupSeconds });
    // The warm-up's last requests may still be committing.
    await waitForQuiet(ctx.pool);
    const rowsBefore = await countRows(ctx.pool);
    const watcher = watch(server.pid, [server.pid]);
    const generatorCore0 = coreTicks(topology.generator);
    const run = await wrkClosedLoop({ ...load, seconds });
    const usage = watcher.stop();
    const generatorCore1 = coreTicks(topology.generator);
    await waitForQuiet(ctx.pool);
    const rowsAdded = (await countRows(ctx.pool)) - rowsBefore;
    // Every 200 is a row; at most the requests in flight when wrk stopped are rows
    // without an answer counted.
    const integrity =
      run.non2xx === 0 &&
      run.socketErrors === 0 &&
      rowsAdded >= run.ok &&
      rowsAdded <= run.ok + CONNECTIONS;
    // One client at a time: the latency of a request on a server with nothing else to do.
    const single = await wrkClosedLoop({
      ...load,
      connections: 1,
      seconds: c1Seconds,
    });
    return {
      rps: run.rps,
      p50: run.p50,
      p99: run.p99,
      c1P50: single.p50,
      cpuUsPerRequest: (usage.cpuSeconds * 1e6) / run.requests,
      peakRssMb: usage.peakRssMb,
      // The generator's core (with PostgreSQL on it in production): near 1, it may be the
      // limit rather than the server.
      generatorCoreBusy:
        (generatorCore1.busy - generatorCore0.busy) /
        Math.max(1, generatorCore1.total - generatorCore0.total),
      othersBusy: usage.othersBusy,
      errors:
        run.non2xx +
        run.socketErrors +
        single.non2xx +
        single.socketErrors +
        (integrity ? 0 : 1),
      rowsAdded,
      ok: run.ok,
    };
  } finally {
    await server.stop();
    pinProcessTree(ctx.postmasterPid, ALL_CPUS);
  }
}

/** What wrk alone can offer: a server that answers every request at once. */
async function generatorCeiling(ctx, topology, seconds) {
  const server = await startServer({
    name: 'answers at once',
    args: [BARE_REFUSAL_SERVER],
  });
  try {
    pinProcessTree(server.pid, topology.server);
    const run = await wrkClosedLoop({
      url: server.url,
      token: ctx.token,
      connections: CONNECTIONS,
      cpu: topology.generator,
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
function serversOf({ only, versus, serviceFlags = [] }) {
  const servers = {
    ...REFERENCES,
    // The service's flags (--cpu-prof) on either adapter.
    service: { args: serviceArgs(serviceFlags) },
    'service on fastify': {
      ...REFERENCES['service on fastify'],
      args: serviceArgs(serviceFlags),
    },
  };
  if (versus !== undefined)
    servers.versus = {
      // Its own project's flags only: serviceArgs would put this project's first.
      args: [...startFlagsOfBuild(versus), serviceMainOf(versus)],
    };
  if (only === undefined) return servers;
  const wanted = new Set(['service', 'grouping', ...only]);
  if (versus !== undefined) wanted.add('versus');
  return Object.fromEntries(
    Object.entries(servers).filter(([name]) => wanted.has(name)),
  );
}

/**
 * `rounds` rounds of every server in one topology (a key of TOPOLOGIES); null when wrk or
 * taskset is missing (install wrk: `apt-get install wrk`). `serviceFlags` are Node flags
 * for the service (--cpu-prof).
 */
export async function referenceRounds(
  ctx,
  {
    topology: topologyName,
    rounds,
    warmupSeconds,
    seconds,
    c1Seconds,
    log,
    only,
    versus,
    serviceFlags,
  },
) {
  if (!wrkAvailable()) {
    log('wrk or taskset is not on the PATH: the references are skipped');
    return null;
  }
  const topology = TOPOLOGIES[topologyName];
  const SERVERS = serversOf({ only, versus, serviceFlags });
  if ('docs-style' in SERVERS || 'docs-style on fastify' in SERVERS)
    buildDocsStyleApp();
  const names = Object.keys(SERVERS);
  const results = Object.fromEntries(names.map((name) => [name, []]));
  const ceilings = [];
  const loads = [];
  for (let round = 0; round < rounds; round += 1) {
    const loadBefore = loadavg();
    // At least 2 s: wrk's first second on a busy machine may go on opening its connections.
    ceilings.push(
      await generatorCeiling(ctx, topology, Math.max(2, warmupSeconds)),
    );
    log(
      `${topologyName} round ${round + 1}: wrk alone offers ${ceilings.at(-1).toFixed(0)} req/s`,
    );
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const result = await turn(ctx, name, SERVERS[name], {
        topology,
        warmupSeconds,
        seconds,
        c1Seconds,
      });
      results[name].push(result);
      log(
        `${topologyName} round ${round + 1}, ${name}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99.toFixed(1)} ms, ` +
          `c=1 p50 ${result.c1P50.toFixed(2)} ms, CPU ${result.cpuUsPerRequest.toFixed(0)} us/req, ` +
          `peak RSS ${result.peakRssMb.toFixed(0)} MB, generator core ${(result.generatorCoreBusy * 100).toFixed(0)}% busy, ` +
          `others ${(result.othersBusy * 100).toFixed(0)}%, ${result.errors} errors`,
      );
    }
    loads.push({ before: loadBefore, after: loadavg() });
  }
  return {
    topology: topologyName,
    connections: CONNECTIONS,
    seconds,
    c1Seconds,
    ceilings,
    loads,
    results,
  };
}

/**
 * The references of a run, by topology, in the order given (the production topology first:
 * the headline and the targets), with the run's settings and flags.
 */
export async function referencesOfRun(ctx, { topologies, flags }) {
  const references = {};
  for (const topology of topologies)
    references[topology] = await referenceRounds(ctx, {
      topology,
      rounds: ctx.options.runs,
      warmupSeconds: ctx.options.warmupSeconds,
      seconds: ctx.options.referenceSeconds,
      c1Seconds: ctx.options.referenceC1Seconds,
      log: ctx.log,
      only: flags.references?.split(',').filter((name) => name !== ''),
      versus: flags.versus,
      serviceFlags: ctx.serviceFlags,
    });
  return references;
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

/**
 * Issue 32's targets, each a ratio within the same rounds of the production topology:
 * the hand-written one-INSERT server, the grouping ceiling and the docs-style app.
 */
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
  // A server's figure over another's, per round: worked out only when both ran.
  const against = (
    base,
    field,
    limit,
    target,
    atMost = false,
    subject = 'service',
  ) => ({
    needs: [subject, base],
    target,
    value: () => ratio(references, subject, base, field),
    limit,
    atMost,
  });
  const list = [
    against(
      'baseline',
      'rps',
      1,
      'c=64 throughput ≥ 1.0x the hand-written server (baseline)',
    ),
    against(
      'baseline',
      'cpuUsPerRequest',
      1.5,
      'CPU per request ≤ 1.5x the hand-written server',
      true,
    ),
    against(
      'grouping',
      'cpuUsPerRequest',
      2.5,
      'CPU per request ≤ 2.5x the grouping ceiling',
      true,
    ),
    against('docs-style', 'rps', 2, 'c=64 throughput ≥ 2x the docs-style app'),
    against(
      'grouping',
      'cpuUsPerRequest',
      2.0,
      'on Fastify: CPU per request ≤ 2.0x the grouping ceiling',
      true,
      'service on fastify',
    ),
    against(
      'docs-style on fastify',
      'rps',
      2,
      'on Fastify: c=64 throughput ≥ 2x the docs-style app on Fastify',
      false,
      'service on fastify',
    ),
    against(
      'baseline',
      'c1P50',
      1.5,
      'c=1 p50 ≤ 1.5x the hand-written server',
      true,
    ),
    {
      target: 'peak RSS ≤ 200 MB, npm run start:prod (MB, worst round)',
      value: () => rss('service'),
      limit: 200,
      atMost: true,
    },
    {
      needs: 'service, no flags',
      target: 'peak RSS ≤ 200 MB, node dist/service/main.js (MB, worst round)',
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
    .filter(({ needs }) =>
      [needs ?? []].flat().every((name) => name in references.results),
    )
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
    ...['cpuUsPerRequest', 'rps', 'c1P50', 'peakRssMb'].map(
      (field) =>
        `| ${field} | ${ratio(references, 'versus', 'service', field).toFixed(3)} | ${perRound(field)} |`,
    ),
  ];
}

const loadText = (load) => load.map((v) => v.toFixed(2)).join(' ');

/**
 * The table of one topology's rounds, as markdown; with `withTargets`, issue 32's targets
 * below it (they read from the production topology only).
 */
export function formatReferences(references, { withTargets = false } = {}) {
  const names = Object.keys(references.results);
  const has = (name) => name in references.results;
  const versusRatio = (name, base, field) =>
    has(base) ? ratio(references, name, base, field).toFixed(2) : '–';
  const rows = names.map((name) => {
    const f = (field, digits) => med(references, name, field).toFixed(digits);
    return (
      `| ${name} | ${Number(f('rps', 0)).toLocaleString('en-US')} | ${f('p99', 1)} | ${f('c1P50', 2)} | ` +
      `${f('cpuUsPerRequest', 0)} | ${f('peakRssMb', 0)} | ` +
      `${versusRatio(name, 'baseline', 'rps')} | ${versusRatio(name, 'baseline', 'cpuUsPerRequest')} | ` +
      `${versusRatio(name, 'grouping', 'rps')} | ${versusRatio(name, 'grouping', 'cpuUsPerRequest')} | ` +
      `${(med(references, name, 'generatorCoreBusy') * 100).toFixed(0)}% | ${(med(references, name, 'othersBusy') * 100).toFixed(0)}% |`
    );
  });
  const topology = TOPOLOGIES[references.topology];
  const targets = withTargets
    ? [
        '',
        '| target (issue 32) | value | |',
        '| --- | ---: | --- |',
        ...referenceTargets(references).map(
          ({ target, value, met }) =>
            `| ${target} | ${Number.isInteger(value) ? value : value.toFixed(2)} | ${met ? 'met' : '**missed**'} |`,
        ),
      ]
    : [];
  return [
    `c=${references.connections} (then c=1 for ${references.c1Seconds} s), wrk on core ${topology.generator}, ` +
      `servers on core ${topology.server}, PostgreSQL on core ${topology.database}; ` +
      `${references.seconds} s per turn, ${references.results.service.length} rounds, the order rotating, medians; ` +
      `wrk alone offered ${references.ceilings.map((c) => c.toFixed(0)).join(', ')} req/s; ` +
      `load average ${references.loads.map(({ before, after }) => `${loadText(before)} -> ${loadText(after)}`).join(', ')} per round.`,
    '',
    '| server | req/s | p99 ms | c=1 p50 ms | CPU us/req | peak RSS MB | req/s vs baseline | CPU/req vs baseline | req/s vs grouping | CPU/req vs grouping | generator core busy | others CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    ...targets,
    ...formatVersus(references),
  ].join('\n');
}
