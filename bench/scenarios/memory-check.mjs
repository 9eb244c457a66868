// Where the service's peak memory goes, and what a change of Node flags or environment
// does to it and to the CPU per request. Each variant is started fresh in its turn, alone
// (one server alive at a time, unlike quick-check's --versus, whose second service B
// peaks higher and spends less CPU whatever it runs), warmed up for 3 s and measured for
// --seconds at c=--connections; the order of the variants alternates from round to round.
//
// Each round prints the CPU per request, the peak RSS over the warm-up and the
// measurement, and how the resident memory splits at the end: the files mapped (the node
// binary: its builtins and code), V8's heap (physical, as the process itself reports it
// through bench/preload/memory-split.mjs), and the rest of the anonymous memory (malloc: freed
// memory glibc keeps counts here), with the peak of V8's malloc'd zones (the compilers').
//
// The first variant is the service as `npm run start:prod` runs it; each other is given
// as words: those starting with "--" are Node flags added after production's (a later
// flag wins: `--maglev` undoes `--no-maglev`), NAME=value ones are environment variables,
// and `--no-production-flags` runs the service on V8's defaults (the V8 flags it would add
// to its own command line undone: withoutServiceV8Flags); after a "|", a build directory
// other than dist/ (a build of another commit, as quick-check's --versus takes it).
//
//   node bench/scenarios/memory-check.mjs [--rounds 6] [--seconds 8] [--connections 64] VARIANT...
//   node bench/scenarios/memory-check.mjs --rounds 8 -- '--maglev' 'MALLOC_ARENA_MAX=2'
//   node bench/scenarios/memory-check.mjs --rounds 4 -- '--no-production-flags|/tmp/before/dist'
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { samplePeakRss } from '../../test-kit/peak-rss.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import {
  closedLoop,
  freshLoadOn,
  measuredClosedLoop,
} from '../lib/closed-loop.mjs';
import { emptyTable } from '../lib/database.mjs';
import { runScenario } from '../lib/run-context.mjs';
import {
  MEMORY_SPLIT_PRELOAD,
  RESULTS,
  SERVICE_MAIN,
  serviceMainOf,
} from '../lib/paths.mjs';
import {
  preloadReport,
  serviceArgs,
  startServer,
  withoutServiceV8Flags,
} from '../lib/servers.mjs';
import { median } from '../lib/stats.mjs';
import { statusKb } from '../lib/usage.mjs';

const SPLIT_FILE = join(RESULTS, 'memory-split.jsonl');
const MB = 1024 * 1024;

const options = commandLine({
  numbers: { rounds: 6, seconds: 8, connections: 64 },
  rest: true,
});

function variant(spec) {
  const [wordsPart, dist = ''] = spec.split('|');
  const words = wordsPart.split(/\s+/).filter(Boolean);
  const env = Object.fromEntries(
    words
      .filter((word) => !word.startsWith('--'))
      .map((word) => {
        const at = word.indexOf('=');
        if (at <= 0)
          throw new Error(`"${word}" is neither --flag nor NAME=value`);
        return [word.slice(0, at), word.slice(at + 1)];
      }),
  );
  const flags = words.filter((word) => word.startsWith('--'));
  return {
    name: spec,
    production: !flags.includes('--no-production-flags'),
    nodeFlags: flags.filter((word) => word !== '--no-production-flags'),
    env,
    main: dist.trim() === '' ? SERVICE_MAIN : serviceMainOf(dist.trim()),
  };
}
const variants = [
  {
    name: 'start:prod',
    production: true,
    nodeFlags: [],
    env: {},
    main: SERVICE_MAIN,
  },
  ...options.rest.map(variant),
];
const log = logger('memory');

async function measure(ctx, v) {
  const server = await startServer({
    name: v.name,
    args: serviceArgs(
      [
        ...(v.production ? [] : await withoutServiceV8Flags(v.main)),
        ...v.nodeFlags,
        `--import=${MEMORY_SPLIT_PRELOAD}`,
      ],
      v.main,
    ),
    env: {
      DATABASE_URL: ctx.databaseUrl,
      API_TOKENS: ctx.token,
      MEMORY_SPLIT_FILE: SPLIT_FILE,
      ...v.env,
    },
    logFile: join(RESULTS, 'memory-check-service.log'),
  });
  try {
    await emptyTable(ctx.pool);
    const load = freshLoadOn(server, ctx.token, options.connections);
    const warmUpPeak = samplePeakRss(server.pid);
    await closedLoop({ ...load, seconds: 3 });
    const warmUpPeakMb = warmUpPeak.stop();
    const { run, usage, cpuMsPerAnswer } = await measuredClosedLoop(
      server.pid,
      {
        ...load,
        seconds: options.seconds,
      },
    );
    const anonMb = statusKb(server.pid, 'RssAnon') / 1024;
    const split = await preloadReport(server.pid, SPLIT_FILE);
    return {
      rps: run.okIds.length / run.seconds,
      cpuMs: cpuMsPerAnswer,
      peakMb: Math.max(warmUpPeakMb, usage.peakRssMb),
      fileMb: statusKb(server.pid, 'RssFile') / 1024,
      v8Mb: split.v8Physical / MB,
      youngMb:
        ((split.spaces.new_space ?? 0) +
          (split.spaces.new_large_object_space ?? 0)) /
        MB,
      oldMb: (split.spaces.old_space ?? 0) / MB,
      otherAnonMb: anonMb - split.v8Physical / MB,
      zonePeakMb: split.v8PeakMalloced / MB,
    };
  } finally {
    await server.stop();
  }
}

const show = (r) =>
  `${r.rps.toFixed(0).padStart(5)} req/s, CPU ${r.cpuMs.toFixed(3)} ms/req, peak RSS ${r.peakMb.toFixed(0)} MB; ` +
  `at the end: files ${r.fileMb.toFixed(0)}, V8 heap ${r.v8Mb.toFixed(0)} (young ${r.youngMb.toFixed(0)}, old ${r.oldMb.toFixed(0)}), other anonymous ${r.otherAnonMb.toFixed(0)} MB ` +
  `(V8 zones peaked at ${r.zonePeakMb.toFixed(1)})`;

async function main() {
  await mkdir(RESULTS, { recursive: true });
  const results = variants.map(() => []);
  await runScenario(log, async (ctx) => {
    for (let round = 0; round < options.rounds; round += 1) {
      const order = variants.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        results[i].push(await measure(ctx, variants[i]));
        process.stdout.write(
          `round ${round + 1} ${variants[i].name}: ${show(results[i].at(-1))}\n`,
        );
      }
    }
  });
  const of = (rows, key) => median(rows.map((r) => r[key]));
  for (const [i, rows] of results.entries()) {
    const versusFirst = rows.map(
      (r, round) => r.cpuMs / results[0][round].cpuMs,
    );
    process.stdout.write(
      `${variants[i].name}: median peak RSS ${of(rows, 'peakMb').toFixed(0)} MB (each round: ${rows.map((r) => r.peakMb.toFixed(0)).join(' ')}), ` +
        `other anonymous ${of(rows, 'otherAnonMb').toFixed(0)} MB, V8 heap ${of(rows, 'v8Mb').toFixed(0)} MB (young ${of(rows, 'youngMb').toFixed(0)}, old ${of(rows, 'oldMb').toFixed(0)}), V8 zones' peak ${of(rows, 'zonePeakMb').toFixed(1)} MB; ` +
        `CPU ${of(rows, 'cpuMs').toFixed(3)} ms/req` +
        (i === 0
          ? '\n'
          : `, ${median(versusFirst).toFixed(3)}x start:prod's (each round: ${versusFirst.map((x) => x.toFixed(2)).join(' ')})\n`),
    );
  }
}

await main();
