// What an overload refusal costs against a create (docs/testing.md, "Overload is shed, not queued"):
// CPU per request of one server in a closed loop, total and on its main thread, for
//   create  the built service creating plants;
//   refuse  the built service refusing every create (CREATE_CONCURRENCY_LIMIT=1, no waiting);
//   floor   bench/servers/bare-refusal-server.mjs: node:http answering the same 503 and nothing else.
// Each runs alone, with the flags of `npm run start:prod`, after a 2 s warm-up. Twice the
// service's capacity leaves (1 - 2p) / (1 - p) of it for creates when p, a refusal's cost
// over a create's, is paid on the same main thread.
//
//   node bench/scenarios/refusal-cost.mjs [--connections 256] [--seconds 5] [--rounds 2]
import { join } from 'node:path';
import { commandLine, logger } from '../lib/cli.mjs';
import { closedLoop, measuredClosedLoop } from '../lib/closed-loop.mjs';
import { openDatabase } from '../lib/database.mjs';
import { BARE_REFUSAL_SERVER, RESULTS, SERVICE_MAIN } from '../lib/paths.mjs';
import { serviceArgs, startServer } from '../lib/servers.mjs';
import { createWorkload, newToken } from '../lib/workload.mjs';

const options = commandLine({
  numbers: { connections: 256, seconds: 5, rounds: 2 },
});
const log = logger('refusal-cost');

const servers = [
  { name: 'create', main: SERVICE_MAIN, env: {} },
  {
    name: 'refuse',
    main: SERVICE_MAIN,
    env: { CREATE_CONCURRENCY_LIMIT: '1', CREATE_WAITING_LIMIT: '0' },
  },
  { name: 'floor', main: BARE_REFUSAL_SERVER, env: {} },
];

async function measure(server, ctx) {
  const started = await startServer({
    name: server.name,
    args: serviceArgs([], server.main),
    env: {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      ...server.env,
    },
    logFile: join(RESULTS, `refusal-cost-${server.name}.log`),
  });
  try {
    const load = {
      url: started.url,
      token: ctx.token,
      workload: createWorkload(),
      connections: options.connections,
    };
    await closedLoop({ ...load, seconds: 2 });
    const rounds = [];
    for (let round = 0; round < options.rounds; round += 1) {
      const window = await measuredClosedLoop(started.pid, {
        ...load,
        seconds: options.seconds,
      });
      rounds.push({
        statuses: window.run.statuses,
        perSecond: window.answered / window.run.seconds,
        cpuUs: window.cpuMsPerAnswer * 1000,
        mainUs: window.mainThreadCpuMsPerAnswer * 1000,
      });
    }
    return rounds;
  } finally {
    await started.stop();
  }
}

const database = await openDatabase(log);
try {
  const ctx = { databaseUrl: database.url, token: newToken() };
  const results = {};
  for (const server of servers) {
    results[server.name] = await measure(server, ctx);
    for (const round of results[server.name])
      process.stdout.write(
        `${server.name.padEnd(6)} ${round.perSecond.toFixed(0).padStart(6)} answers/s ` +
          `${JSON.stringify(round.statuses)}, CPU ${round.cpuUs.toFixed(1)} us per answer ` +
          `(main thread ${round.mainUs.toFixed(1)})\n`,
      );
  }
  const best = (name) => Math.min(...results[name].map((r) => r.mainUs));
  const p = best('refuse') / best('create');
  process.stdout.write(
    `main thread, best round: a refusal costs ${p.toFixed(2)} of a create (the floor ` +
      `${(best('floor') / best('create')).toFixed(2)}); at twice the capacity, creates ` +
      `(1 - 2p) / (1 - p) = ${((1 - 2 * p) / (1 - p)).toFixed(2)} of it\n`,
  );
} finally {
  await database.close();
}
