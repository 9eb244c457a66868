// Where one lone request's time goes (issue 32: the service's c=1 p50 against the
// hand-written server's). Each server in turn, alone on core 1 with PostgreSQL and wrk on
// core 0 (the production topology), preloaded with bench/preload/hop-timer.mjs: 3 s at
// c=64 to warm up, then --seconds at c=1; it prints wrk's p50 and, inside the server, the
// median time from Node's 'request' event to each stamp, median and 10th percentile (pg query sent and answered,
// response.end, 'finish', and any `globalThis.__hop?.(label)` of a throwaway build).
//
//   node bench/scenarios/c1-hops.mjs [--seconds 5] [--rounds 2] [--servers service,baseline,grouping]
//     [--dist DIR]   (another build of the service, e.g. one with __hop stamps)
//     [--builds NAME=DIR,...] (more builds of the service, in the same rounds: add their
//     NAMEs to --servers)
import { rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import {
  emptyTable,
  harnessPool,
  openDatabase,
  waitForQuiet,
} from '../lib/database.mjs';
import {
  BASELINE_SERVER,
  BENCH,
  RESULTS,
  ROOT,
  serviceMainOf,
} from '../lib/paths.mjs';
import {
  benchmarkSettings,
  preloadReport,
  serviceArgs,
  startServer,
} from '../lib/servers.mjs';
import { postmasterOf } from '../lib/usage.mjs';
import { newToken } from '../lib/workload.mjs';
import { wrkClosedLoop } from '../lib/wrk.mjs';

const options = commandLine({
  numbers: { seconds: 5, rounds: 2 },
  strings: {
    dist: join(ROOT, 'dist'),
    builds: '',
    servers: 'service,baseline,grouping',
  },
});
const log = logger('c1-hops');
const PRELOAD = join(BENCH, 'preload', 'hop-timer.mjs');

const SERVERS = {
  service: () => ({
    args: serviceArgs([`--import=${PRELOAD}`], serviceMainOf(options.dist)),
  }),
  baseline: () => ({ args: [`--import=${PRELOAD}`, BASELINE_SERVER] }),
  grouping: () => ({
    args: [`--import=${PRELOAD}`, BASELINE_SERVER],
    env: { GROUP_INSERTS: '1' },
  }),
};

for (const build of options.builds.split(',').filter(Boolean)) {
  const [name, dist] = build.split('=');
  SERVERS[name] = () => ({
    args: serviceArgs([`--import=${PRELOAD}`], serviceMainOf(dist)),
  });
}

async function turn(ctx, name) {
  const file = join(RESULTS, `hops-${name}.json`);
  rmSync(file, { force: true });
  const spec = SERVERS[name]();
  const server = await startServer({
    name,
    args: spec.args,
    env: benchmarkSettings(ctx.databaseUrl, ctx.token, {
      HOP_TIMER_FILE: file,
      ...spec.env,
    }),
    logFile: join(RESULTS, 'c1-hops-servers.log'),
  });
  try {
    pinProcessTree(server.pid, '1');
    pinProcessTree(ctx.postmasterPid, '0');
    const load = { url: server.url, token: ctx.token, cpu: '0' };
    await emptyTable(ctx.pool);
    await wrkClosedLoop({ ...load, connections: 64, seconds: 3 });
    await waitForQuiet(ctx.pool);
    // The first report is the warm-up's: thrown away, so the next one is the c=1 run's.
    await preloadReport(server.pid, file);
    const single = await wrkClosedLoop({
      ...load,
      connections: 1,
      seconds: options.seconds,
    });
    return {
      p50: single.p50,
      rps: single.rps,
      ...(await preloadReport(server.pid, file)),
    };
  } finally {
    await server.stop();
  }
}

async function main() {
  await mkdir(RESULTS, { recursive: true });
  const database = await openDatabase(log);
  const pool = harnessPool(database.url);
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  const ctx = {
    databaseUrl: database.url,
    pool,
    token: newToken(),
    postmasterPid: postmasterOf(rows[0].pid),
  };
  const names = options.servers.split(',').filter(Boolean);
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      const order = names.map((_, i) => names[(i + round - 1) % names.length]);
      for (const name of order) {
        const result = await turn(ctx, name);
        log(
          `round ${round} ${name}: wrk c=1 p50 ${result.p50.toFixed(3)} ms, ${result.rps.toFixed(0)} req/s; load ${(await import('node:os')).loadavg()[0].toFixed(2)}; inside the server, median us after 'request' (${result.requests} requests):`,
        );
        for (const row of result.rows)
          log(
            `    ${row.us.toFixed(1).padStart(8)} p50 ${row.p10.toFixed(1).padStart(8)} p10  ${row.label}${row.n === result.requests ? '' : ` (n=${row.n})`}`,
          );
      }
    }
  } finally {
    await pool.end();
    await database.close();
  }
}

await main();
