// How much of its core the service uses at a given concurrency, and where the rest goes
// (issue 32: at c=64 the service's core sat idle 12% of the time, in step with its
// statements' round trips). The built service, alone on core 1, PostgreSQL and wrk on core 0
// (the production topology); for each build and each number of clients in turn, a fresh
// service, 3 s of warm-up, then --seconds measured: req/s, CPU per request, the share of a
// core the service's process used, and core 1's time from /proc/stat (user, system, softirq,
// the kernel's network work charged to no process, and idle).
//
//   node bench/scenarios/core-use.mjs [--connections 64,128,256] [--seconds 8] [--rounds 2]
//     [--builds NAME=DIR,...]   (other builds' dist/ directories, in the same rounds)
import { join } from 'node:path';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { CleanUps } from '../lib/clean-ups.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import { emptyTable, waitForQuiet } from '../lib/database.mjs';
import { coreTimes } from '../lib/machine.mjs';
import { RESULTS, SERVICE_MAIN, serviceMainOf } from '../lib/paths.mjs';
import { openRunContext } from '../lib/run-context.mjs';
import {
  benchmarkSettings,
  serviceArgs,
  startServer,
} from '../lib/servers.mjs';
import { watch } from '../lib/usage.mjs';
import { wrkAvailable, wrkClosedLoop } from '../lib/wrk.mjs';

const SERVER_CPU = '1';
const OTHER_CPU = '0';

const options = commandLine({
  numbers: { seconds: 8, rounds: 2 },
  strings: { connections: '64,128,256', builds: '' },
});
const log = logger('core-use');
const cleanUps = new CleanUps(log);
cleanUps.onSignals();

function shares(before, after) {
  const spent = Object.fromEntries(
    Object.keys(after).map((key) => [key, after[key] - before[key]]),
  );
  const total = Object.values(spent).reduce((sum, value) => sum + value, 0);
  const percent = (key) =>
    `${Math.round((100 * spent[key]) / Math.max(1, total))}%`;
  return `user ${percent('user')}, system ${percent('system')}, softirq ${percent('softirq')}, idle ${percent('idle')}, steal ${percent('steal')}`;
}

async function turn(ctx, build, connections) {
  const main =
    build.dist === undefined ? SERVICE_MAIN : serviceMainOf(build.dist);
  const args = serviceArgs([], main);
  const server = await startServer({
    name: build.name,
    args,
    env: benchmarkSettings(ctx.databaseUrl, ctx.token),
    logFile: join(RESULTS, 'core-use-service.log'),
  });
  try {
    pinProcessTree(server.pid, SERVER_CPU);
    pinProcessTree(ctx.postmasterPid, OTHER_CPU);
    const load = {
      url: server.url,
      token: ctx.token,
      connections,
      cpu: OTHER_CPU,
    };
    await emptyTable(ctx.pool);
    await wrkClosedLoop({ ...load, seconds: 3 });
    await waitForQuiet(ctx.pool);
    const usage = watch(server.pid, [server.pid]);
    const coreBefore = coreTimes(SERVER_CPU);
    const started = performance.now();
    const run = await wrkClosedLoop({ ...load, seconds: options.seconds });
    const used = usage.stop();
    const elapsed = (performance.now() - started) / 1000;
    const core = shares(coreBefore, coreTimes(SERVER_CPU));
    log(
      `${build.name}, c=${connections}: ${run.rps.toFixed(0)} req/s, ` +
        `${((used.cpuSeconds * 1e6) / run.requests).toFixed(1)} us CPU per request, ` +
        `the process ${Math.round((100 * used.cpuSeconds) / elapsed)}% of a core; ` +
        `core ${SERVER_CPU}: ${core}; ${run.non2xx + run.socketErrors} errors`,
    );
  } finally {
    await server.stop();
  }
}

async function main() {
  if (!wrkAvailable())
    throw new Error('wrk and taskset are needed (apt install wrk)');
  const builds = [
    { name: 'service' },
    ...options.builds
      .split(',')
      .filter(Boolean)
      .map((spec) => {
        const [name, dist] = spec.split('=');
        return { name, dist };
      }),
  ];
  const counts = options.connections.split(',').map(Number);
  const { ctx } = await openRunContext({
    options: {},
    serviceFlags: [],
    log,
    cleanUps,
  });
  for (let round = 1; round <= options.rounds; round += 1) {
    log(`round ${round}`);
    for (const connections of counts)
      for (const build of builds) await turn(ctx, build, connections);
  }
}

main()
  .catch((error) => {
    log(`failed: ${error.stack ?? error}`);
    process.exitCode = 1;
  })
  .finally(() => cleanUps.runAll());
