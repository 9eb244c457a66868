// What an overload refusal costs against a create (docs/testing.md, "Overload is shed, not queued"):
// CPU per request of one server in a closed loop, total and on its main thread, for
//   create  the built service creating plants;
//   refuse  the built service refusing every create (CREATE_CONCURRENCY_LIMIT=1, no waiting);
//   floor   bench/bare-refusal-server.mjs: node:http answering the same 503 and nothing else.
// Each runs alone, with the flags of `npm run start:prod`, after a 2 s warm-up. Twice the
// service's capacity leaves (1 - 2p) / (1 - p) of it for creates when p, a refusal's cost
// over a create's, is paid on the same main thread.
//
//   node bench/refusal-cost.mjs [--connections 256] [--seconds 5] [--rounds 2]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closedLoop } from './closed-loop.mjs';
import { openDatabase } from './database.mjs';
import {
  freePort,
  measuredClosedLoop,
  productionNodeFlags,
  serverEnv,
  startServer,
} from './processes.mjs';
import { createWorkload, newToken } from './workload.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '256' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
  },
});
const log = (message) => process.stderr.write(`[refusal-cost] ${message}\n`);

const servers = [
  { name: 'create', main: join(ROOT, 'dist/main.js'), env: {} },
  {
    name: 'refuse',
    main: join(ROOT, 'dist/main.js'),
    env: { CREATE_CONCURRENCY_LIMIT: '1', CREATE_WAITING_LIMIT: '0' },
  },
  { name: 'floor', main: join(BENCH, 'bare-refusal-server.mjs'), env: {} },
];

async function measure(server, ctx) {
  const port = await freePort();
  const started = await startServer({
    name: server.name,
    args: [...productionNodeFlags(ROOT), server.main],
    port,
    env: serverEnv(port, {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      ...server.env,
    }),
    logFile: join(BENCH, 'results', `refusal-cost-${server.name}.log`),
  });
  try {
    const load = {
      url: started.url,
      token: ctx.token,
      workload: createWorkload(),
      connections: Number(values.connections),
    };
    await closedLoop({ ...load, seconds: 2 });
    const rounds = [];
    for (let round = 0; round < Number(values.rounds); round += 1) {
      const window = await measuredClosedLoop(started.pid, {
        ...load,
        seconds: Number(values.seconds),
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

const database = await openDatabase({ root: ROOT, log });
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
