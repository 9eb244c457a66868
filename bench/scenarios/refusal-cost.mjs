// What an overload refusal costs against a create (docs/testing.md, "Overload is shed, not queued"):
// CPU per request of one server in a closed loop, total and on its main thread, for
//   create  the built service creating plants;
//   refuse  the built service refusing every create (CREATE_CONCURRENCY_LIMIT=1, no waiting);
//   floor   bench/servers/bare-refusal-server.mjs: node:http answering the same 503 and nothing else.
// The service on each adapter (HTTP_ADAPTER): express, its default, then fastify.
// Each turn is bench/lib/pinned-turn.mjs's: alone on core 1, the load generator and
// PostgreSQL on core 0, with the flags of `npm run start:prod`, on an empty table after a
// checkpoint and a 2 s warm-up; each round takes the servers in a new order. Twice the
// service's capacity leaves (1 - 2p) / (1 - p) of it for creates when p, a refusal's cost
// over a create's, is paid on the same main thread.
//
//   node bench/scenarios/refusal-cost.mjs [--connections 256] [--seconds 5] [--rounds 3]
import { join } from 'node:path';
import { commandLine, logger } from '../lib/cli.mjs';
import { BARE_REFUSAL_SERVER, RESULTS, SERVICE_MAIN } from '../lib/paths.mjs';
import {
  pinLoadAndDatabase,
  pinnedTurn,
  rotatingRounds,
} from '../lib/pinned-turn.mjs';
import { runScenario } from '../lib/run-context.mjs';
import { median } from '../lib/stats.mjs';

const options = commandLine({
  numbers: { connections: 256, seconds: 5, rounds: 3 },
});
const log = logger('refusal-cost');

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
  const window = await pinnedTurn(ctx, server, {
    connections: options.connections,
    warmupSeconds: 2,
    seconds: options.seconds,
    logFile: join(RESULTS, `refusal-cost-${server.name.replace(' ', '-')}.log`),
  });
  return {
    statuses: window.run.statuses,
    perSecond: window.answered / window.run.seconds,
    cpuUs: window.cpuMsPerAnswer * 1000,
    mainUs: window.mainThreadCpuMsPerAnswer * 1000,
  };
}

await runScenario(log, async (ctx, cleanUps) => {
  const unpin = pinLoadAndDatabase(ctx);
  cleanUps.add(async () => unpin());
  const results = Object.fromEntries(servers.map(({ name }) => [name, []]));
  await rotatingRounds(servers, options.rounds, async (server, round) => {
    const result = await measure(server, ctx);
    results[server.name].push(result);
    process.stdout.write(
      `round ${round + 1} ${server.name.padEnd(14)} ${result.perSecond.toFixed(0).padStart(6)} answers/s ` +
        `${JSON.stringify(result.statuses)}, CPU ${result.cpuUs.toFixed(1)} us per answer ` +
        `(main thread ${result.mainUs.toFixed(1)})\n`,
    );
  });
  const mainUs = (name) => median(results[name].map((r) => r.mainUs));
  for (const adapter of ADAPTERS) {
    const create = mainUs(`create ${adapter}`);
    const refusal = mainUs(`refuse ${adapter}`);
    const p = refusal / create;
    process.stdout.write(
      `${adapter}, main thread, medians: a create ${create.toFixed(1)} us, a refusal ` +
        `${refusal.toFixed(1)} us, ${(refusal / mainUs('floor')).toFixed(2)}x the floor's; ` +
        `a refusal costs ${p.toFixed(2)} of a create (the floor ${(mainUs('floor') / create).toFixed(2)}); ` +
        `at twice the capacity, creates (1 - 2p) / (1 - p) = ${((1 - 2 * p) / (1 - p)).toFixed(2)} of it\n`,
    );
  }
});
