// What an overload refusal costs against a create (docs/testing.md, "Overload is shed, not queued"):
// CPU per request of one server in a closed loop, total and on its main thread, for
//   create  the built service creating plants;
//   refuse  the built service refusing every create (CREATE_CONCURRENCY_LIMIT=1, no waiting);
//   floor   bench/servers/bare-refusal-server.mjs: node:http answering the same 503 and nothing else.
// The service on each adapter (HTTP_ADAPTER): express, its default, then fastify.
// Each runs alone on core 1 (taskset), the load generator and PostgreSQL on core 0, with
// the flags of `npm run start:prod`, on an empty table after a checkpoint and a 2 s warm-up;
// each round takes the servers in a new order. Twice the
// service's capacity leaves (1 - 2p) / (1 - p) of it for creates when p, a refusal's cost
// over a create's, is paid on the same main thread.
//
//   node bench/scenarios/refusal-cost.mjs [--connections 256] [--seconds 5] [--rounds 3]
import { join } from 'node:path';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import { closedLoop, measuredClosedLoop } from '../lib/closed-loop.mjs';
import { checkpoint, emptyTable, tableExists } from '../lib/database.mjs';
import { BARE_REFUSAL_SERVER, RESULTS, SERVICE_MAIN } from '../lib/paths.mjs';
import { openRunContext } from '../lib/run-context.mjs';
import { serviceArgs, startServer } from '../lib/servers.mjs';
import { CleanUps } from '../lib/clean-ups.mjs';

const options = commandLine({
  numbers: { connections: 256, seconds: 5, rounds: 3 },
});
const log = logger('refusal-cost');
const SERVER_CPU = '1';
const OTHER_CPU = '0';

const ADAPTERS = ['express', 'fastify'];
const servers = [
  ...ADAPTERS.flatMap((adapter) => [
    {
      name: `create ${adapter}`,
      main: SERVICE_MAIN,
      env: { HTTP_ADAPTER: adapter },
    },
    {
      name: `refuse ${adapter}`,
      main: SERVICE_MAIN,
      env: {
        HTTP_ADAPTER: adapter,
        CREATE_CONCURRENCY_LIMIT: '1',
        CREATE_WAITING_LIMIT: '0',
      },
    },
  ]),
  { name: 'floor', main: BARE_REFUSAL_SERVER, env: {} },
];

async function measure(server, ctx) {
  // The same table for each: empty, just after a checkpoint. One measured after another
  // server's creates would otherwise pay for the rows and the WAL they left.
  // (The first service's start migrates it.)
  if (await tableExists(ctx.pool)) await emptyTable(ctx.pool);
  await checkpoint(ctx.pool);
  const started = await startServer({
    name: server.name,
    args: serviceArgs([], server.main),
    env: {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      ...server.env,
    },
    logFile: join(RESULTS, `refusal-cost-${server.name.replace(' ', '-')}.log`),
  });
  try {
    pinProcessTree(started.pid, SERVER_CPU);
    const load = {
      url: started.url,
      token: ctx.token,
      workload: ctx.workload,
      connections: options.connections,
    };
    await closedLoop({ ...load, seconds: 2 });
    const window = await measuredClosedLoop(started.pid, {
      ...load,
      seconds: options.seconds,
    });
    return {
      statuses: window.run.statuses,
      perSecond: window.answered / window.run.seconds,
      cpuUs: window.cpuMsPerAnswer * 1000,
      mainUs: window.mainThreadCpuMsPerAnswer * 1000,
    };
  } finally {
    await started.stop();
  }
}

const cleanUps = new CleanUps(log);
cleanUps.onSignals();
try {
  const { ctx } = await openRunContext({
    options: { ids: 'random' },
    serviceFlags: [],
    log,
    cleanUps,
  });
  pinProcessTree(process.pid, OTHER_CPU);
  pinProcessTree(ctx.postmasterPid, OTHER_CPU);
  const results = Object.fromEntries(servers.map(({ name }) => [name, []]));
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [i] of servers.entries()) {
      const server = servers[(i + round) % servers.length];
      const result = await measure(server, ctx);
      results[server.name].push(result);
      process.stdout.write(
        `round ${round + 1} ${server.name.padEnd(14)} ${result.perSecond.toFixed(0).padStart(6)} answers/s ` +
          `${JSON.stringify(result.statuses)}, CPU ${result.cpuUs.toFixed(1)} us per answer ` +
          `(main thread ${result.mainUs.toFixed(1)})\n`,
      );
    }
  }
  const median = (name) => {
    const sorted = results[name].map((r) => r.mainUs).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  };
  for (const adapter of ADAPTERS) {
    const create = median(`create ${adapter}`);
    const refusal = median(`refuse ${adapter}`);
    const p = refusal / create;
    process.stdout.write(
      `${adapter}, main thread, medians: a create ${create.toFixed(1)} us, a refusal ` +
        `${refusal.toFixed(1)} us, ${(refusal / median('floor')).toFixed(2)}x the floor's; ` +
        `a refusal costs ${p.toFixed(2)} of a create (the floor ${(median('floor') / create).toFixed(2)}); ` +
        `at twice the capacity, creates (1 - 2p) / (1 - p) = ${((1 - 2 * p) / (1 - p)).toFixed(2)} of it\n`,
    );
  }
} finally {
  await cleanUps.runAll();
}
