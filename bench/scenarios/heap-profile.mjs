// Bytes allocated per create, and where: the built service (production's flags, production
// logging) gets 3 s of creates at c=--connections to warm up, then V8's sampling heap
// profiler runs (bench/preload/heap-sampler.mjs) over exactly --requests more creates.
// Everything sampled, freed since or not, over the creates answered is the bytes allocated
// per request; it prints the total, the top allocating functions and the packages they
// belong to, and keeps the profile in bench/results/ (Chrome DevTools opens it). Run it
// twice or more: the estimate moves by a few tenths of a percent from one run to the next.
//
//   node bench/scenarios/heap-profile.mjs [--requests 20000] [--interval 1024]
//     [--connections 64] [--top 25] [--runs 1] [--dist DIR] [--no-production-flags]
//     [-- node flags...]
// --dist profiles another build (of another commit) than dist/.
import { rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { commandLine, logger } from '../lib/cli.mjs';
import { closedLoop, freshLoadOn } from '../lib/closed-loop.mjs';
import { emptyTable } from '../lib/database.mjs';
import { runScenario } from '../lib/run-context.mjs';
import {
  HEAP_SAMPLER_PRELOAD,
  RESULTS,
  ROOT,
  serviceMainOf,
} from '../lib/paths.mjs';
import { preloadReport, serviceArgs, startServer } from '../lib/servers.mjs';

const options = commandLine({
  numbers: {
    requests: 20000,
    interval: 1024,
    connections: 64,
    top: 25,
    runs: 1,
  },
  strings: { dist: join(ROOT, 'dist') },
  flags: ['no-production-flags'],
  rest: true,
});
const log = logger('heap-profile');
// Frames of the build profiled are named from the folder that holds it (dist/...).
const BUILD_HOME = dirname(options.dist);

/** Where a frame's code lives: a package, a Node.js module, the service's own file, or V8. */
function ownerOf(url) {
  if (url === '') return '(V8 or native)';
  if (url.startsWith('node:')) return url;
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) {
    const [scope, name] = url.slice(at + 'node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  return relative(BUILD_HOME, fileURLToPath(url));
}

/** A frame's file, short: within its package, a Node.js module, or the service's own. */
function fileOf(url) {
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) return url.slice(at + 'node_modules/'.length);
  return url.startsWith('node:')
    ? url
    : relative(BUILD_HOME, fileURLToPath(url));
}

/** Self bytes per allocating function (name, file, line) and per owner, from the tree. */
function tally(profile) {
  const sites = new Map();
  const owners = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (node.selfSize > 0) {
      const where = url === '' ? '' : ` ${fileOf(url)}:${lineNumber + 1}`;
      add(sites, `${functionName || '(anonymous)'}${where}`, node.selfSize);
      add(owners, ownerOf(url), node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);
  return { total, sites: sorted(sites), owners: sorted(owners) };
}

async function profileOnce(ctx, run) {
  const file = join(RESULTS, `heap-profile-${run}.heapprofile`);
  rmSync(file, { force: true });
  const flags = [...options.rest, `--import=${HEAP_SAMPLER_PRELOAD}`];
  const main = serviceMainOf(options.dist);
  const server = await startServer({
    name: 'service',
    args: options['no-production-flags']
      ? [...flags, main]
      : serviceArgs(flags, main),
    env: {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      HEAP_SAMPLE_FILE: file,
      HEAP_SAMPLE_INTERVAL: String(options.interval),
    },
    logFile: join(RESULTS, 'heap-profile-service.log'),
  });
  try {
    await emptyTable(ctx.pool);
    const load = freshLoadOn(server, ctx.token, options.connections);
    await closedLoop({ ...load, seconds: 3 });
    process.kill(server.pid, 'SIGUSR2');
    await sleep(200);
    const { okIds } = await closedLoop({ ...load, amount: options.requests });
    const profile = await preloadReport(server.pid, file, {
      timeoutMs: 30_000,
    });
    return { ok: okIds.length, profile, file };
  } finally {
    await server.stop();
  }
}

async function main() {
  await mkdir(RESULTS, { recursive: true });
  const kb = (bytes, ok) => (bytes / ok / 1024).toFixed(2);
  await runScenario(log, async (ctx) => {
    for (let run = 1; run <= options.runs; run += 1) {
      const { ok, profile, file } = await profileOnce(ctx, run);
      const { total, sites, owners } = tally(profile);
      const share = (bytes) => `${((100 * bytes) / total).toFixed(1)}%`;
      const rows = (list) =>
        list
          .slice(0, options.top)
          .map(
            ([name, bytes]) =>
              `    ${kb(bytes, ok).padStart(6)}  ${share(bytes).padStart(5)}  ${name}\n`,
          )
          .join('');
      process.stdout.write(
        `run ${run}: ${(total / ok / 1024).toFixed(1)} kB allocated per create ` +
          `(${ok} creates answered 200, sampled every ${options.interval} bytes; ${relative(ROOT, file)})\n` +
          `  top ${options.top} allocating functions, kB per create:\n${rows(sites)}` +
          `  by package or file, kB per create:\n${rows(owners)}`,
      );
    }
  });
}

await main();
