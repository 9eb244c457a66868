// One measured turn in the production topology (bench/README.md): the server alone on core
// 1; this process (the load generator) and PostgreSQL on core 0, as other machines are in
// production. The refusal cost (scenarios/refusal-cost.mjs) measures its servers this way;
// the tracing cost (tracing-cost.mjs) two at once, side by side on core 1 (pinnedTurns).
import { execFileSync } from 'node:child_process';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { closedLoop, measuredClosedLoop } from './closed-loop.mjs';
import { emptyTable, tableExists, waitForQuiet } from './database.mjs';
import { benchmarkSettings, serviceArgs, startServer } from './servers.mjs';

const SERVER_CPU = '1';
const OTHER_CPU = '0';

/** taskset on every thread of `pid` (not its children). */
function pinThreads(pid, cpus) {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], {
    stdio: 'ignore',
  });
}

/**
 * This process's threads and PostgreSQL's on core 0 (the servers it starts are moved to
 * core 1 by pinnedTurn); the function returned puts them back on both cores.
 */
export function pinLoadAndDatabase(ctx) {
  pinThreads(process.pid, OTHER_CPU);
  pinProcessTree(ctx.postmasterPid, OTHER_CPU);
  return () => {
    pinThreads(process.pid, '0,1');
    pinProcessTree(ctx.postmasterPid, '0,1');
  };
}

/**
 * `server` ({ name, main, env }) started fresh with Node's `flags` beside `npm run
 * start:prod`'s, on an empty table just after a checkpoint (one measured after another
 * server's creates would otherwise pay for the rows and the WAL they left; the first
 * service's start migrates it), alone on core 1; warmed up for `warmupSeconds` at
 * `connections`, then, once PostgreSQL is quiet, measured for `seconds`. Returns
 * measuredClosedLoop's window.
 */
export async function pinnedTurn(ctx, server, options) {
  const [measured] = await pinnedTurns(ctx, [server], options);
  return measured;
}

/**
 * pinnedTurn for several servers at once, all on core 1, each under its own closed loop at
 * `connections` from the run's one workload (so no id is sent twice), warmed up and measured
 * over the same windows: whatever the host does meanwhile, it does to each of them, so
 * their ratios hold where turns one after another move by a third (tracing-cost.mjs).
 */
export async function pinnedTurns(
  ctx,
  servers,
  { flags = [], connections, warmupSeconds, seconds, logFile },
) {
  if (await tableExists(ctx.pool)) await emptyTable(ctx.pool);
  const started = [];
  try {
    for (const server of servers)
      started.push(
        await startServer({
          name: server.name,
          args: serviceArgs(flags, server.main),
          env: benchmarkSettings(ctx.databaseUrl, ctx.token, server.env),
          logFile,
        }),
      );
    const loads = started.map(({ pid, url }) => {
      pinProcessTree(pid, SERVER_CPU);
      return { url, token: ctx.token, workload: ctx.workload, connections };
    });
    await Promise.all(
      loads.map((load) => closedLoop({ ...load, seconds: warmupSeconds })),
    );
    await waitForQuiet(ctx.pool);
    return await Promise.all(
      started.map(({ pid }, i) =>
        measuredClosedLoop(pid, { ...loads[i], seconds }),
      ),
    );
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
}

/**
 * `rounds` rounds over `items`, each round starting one further along, so that none always
 * goes first: `turn(item, round)` for each, one after another.
 */
export async function rotatingRounds(items, rounds, turn) {
  for (let round = 0; round < rounds; round += 1)
    for (let i = 0; i < items.length; i += 1)
      await turn(items[(i + round) % items.length], round);
}
