// Where a start's time goes (issue 42 item 4), on a quiet machine and on a busy one: the
// built service started `--starts` times on the bench's database (its schema present), as
// `npm run start:prod` starts it, each phase read from its own log:
//   created    spawn to its first log line: Node's start, loading the modules, Nest's
//              bootstrap (its buffered start-up lines are written then);
//   listening  to "Plant Store listening on" (the front door, the port bound);
//   connected  to "Database migrated and connected" (DatabaseStartup: migrations checked,
//              the pool open);
//   ready      to its first 200 from GET /health (a commit probe).
// "busy": one normal-priority busy loop pinned to each core for the whole turn, as a
// machine shared with other work.
//
//   node bench/scenarios/startup-phases.mjs [--starts 5]
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { commandLine, logger } from '../lib/cli.mjs';
import { RESULTS } from '../lib/paths.mjs';
import { runScenario } from '../lib/run-context.mjs';
import {
  benchmarkSettings,
  serviceArgs,
  startServer,
} from '../lib/servers.mjs';
import { median } from '../lib/stats.mjs';

const options = commandLine({ numbers: { starts: 5 } });
const log = logger('startup-phases');
const PHASES = [
  ['created', () => true],
  ['listening', (msg) => msg.startsWith('Plant Store listening on')],
  ['connected', (msg) => msg.startsWith('Database migrated and connected')],
];

/** One busy loop per core, at normal priority; the function returned stops them. */
function busyLoops() {
  const loops = ['0', '1'].map((cpu) =>
    spawn('taskset', ['-c', cpu, 'sh', '-c', 'while :; do :; done'], {
      stdio: 'ignore',
    }),
  );
  return () => loops.forEach((loop) => loop.kill('SIGKILL'));
}

/** One start: each phase's ms from the spawn. */
async function start(ctx) {
  const logFile = join(RESULTS, 'startup-phases-service.log');
  rmSync(logFile, { force: true });
  const spawnedAt = Date.now();
  const server = await startServer({
    name: 'service',
    args: serviceArgs(),
    env: benchmarkSettings(ctx.databaseUrl, ctx.token),
    logFile,
    timeoutMs: 120_000,
  });
  await server.stop();
  const lines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const phases = Object.fromEntries(
    PHASES.map(([name, matches]) => {
      const line = lines.find(
        ({ msg }) => typeof msg === 'string' && matches(msg),
      );
      return [name, line === undefined ? NaN : line.time - spawnedAt];
    }),
  );
  return { ...phases, ready: server.readyMs };
}

await runScenario(log, async (ctx) => {
  // The first start migrates the table: not one of the measured.
  await start(ctx);
  for (const condition of ['quiet', 'busy']) {
    const stop = condition === 'busy' ? busyLoops() : () => undefined;
    const starts = [];
    try {
      for (let i = 0; i < options.starts; i += 1) {
        const phases = await start(ctx);
        starts.push(phases);
        log(
          `${condition} start ${i + 1}: ` +
            Object.entries(phases)
              .map(([name, ms]) => `${name} ${Math.round(ms)} ms`)
              .join(', '),
        );
      }
    } finally {
      stop();
    }
    process.stdout.write(
      `${condition}, medians of ${starts.length} starts (ms from spawn): ` +
        ['created', 'listening', 'connected', 'ready']
          .map(
            (name) =>
              `${name} ${Math.round(median(starts.map((s) => s[name])))}`,
          )
          .join(', ') +
        '\n',
    );
  }
});
