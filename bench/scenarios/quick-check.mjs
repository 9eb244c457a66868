// A quick A/B check for one change: the built service and the baseline, on one embedded
// PostgreSQL, in alternating closed-loop rounds; prints each round and the service's
// ratios to the baseline of the same round (req/s, CPU per request, p50), and peak RSS.
// Single rounds swing by 10% or more on a shared 2-core machine: look at the ratios, repeat,
// and use `npm run bench` for figures worth recording.
//
// The service runs with the Node flags of `npm run start:prod`, then any given after `--`;
// `--no-production-flags` runs it on V8's defaults instead (the flags it would add to its
// own command line undone: withoutServiceV8Flags).
//
//   node bench/scenarios/quick-check.mjs [--connections 64] [--seconds 10] [--runs 2]
//                              [--no-production-flags] [--versus SPEC] [-- node flags...]
//   LOG_LEVEL=warn node bench/scenarios/quick-check.mjs -- --max-old-space-size=160
//
// --versus adds a second service, B, measured in the same rounds (the order of the two
// alternates) and compared with the first, A: for changes smaller than the noise between
// single checks. SPEC is "node flags|build directory", either part optional:
//   node bench/scenarios/quick-check.mjs --runs 5 '--versus=--max-semi-space-size=32 --heap-growing-percent=50'
//   node bench/scenarios/quick-check.mjs --runs 5 '--versus=|/tmp/other-build/dist'
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { productionNodeFlags } from '../../test-kit/node-process.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import { closedLoop, measuredClosedLoop } from '../lib/closed-loop.mjs';
import { emptyTable, harnessPool, openDatabase } from '../lib/database.mjs';
import {
  BASELINE_SERVER,
  RESULTS,
  ROOT,
  SERVICE_MAIN,
  serviceMainOf,
} from '../lib/paths.mjs';
import {
  runtimeOf,
  startServer,
  withoutServiceV8Flags,
} from '../lib/servers.mjs';
import { median, summarize } from '../lib/stats.mjs';
import { highWaterMb } from '../lib/usage.mjs';
import { createWorkload, newToken } from '../lib/workload.mjs';

// The request log goes to a file, as in `npm run bench` (not committed).
const SERVICE_LOG = join(RESULTS, 'check-service.log');
const SERVICE_B_LOG = join(RESULTS, 'check-service-b.log');

const options = commandLine({
  numbers: { connections: 64, seconds: 10, runs: 2 },
  // On V8's defaults, not the service's V8 flags: to measure what they buy.
  flags: ['no-production-flags'],
  strings: { versus: undefined },
  rest: true,
});
const nodeFlags = [
  ...(options['no-production-flags']
    ? await withoutServiceV8Flags()
    : productionNodeFlags(ROOT)),
  ...options.rest,
];
/** "flags|dist": the Node flags and the build directory of the service B. */
function variant(spec) {
  const [flags = '', dist = ''] = spec.split('|');
  return {
    nodeFlags: flags.trim() === '' ? [] : flags.trim().split(/\s+/),
    main: serviceMainOf(dist.trim() === '' ? join(ROOT, 'dist') : dist.trim()),
  };
}
const versus =
  options.versus === undefined ? undefined : variant(options.versus);
const { connections, seconds } = options;
const log = logger('check');

const start = (name, args, env) =>
  startServer({
    name,
    args,
    env,
    logFile: { service: SERVICE_LOG, 'service B': SERVICE_B_LOG }[name],
  });

async function measure(ctx, server) {
  await emptyTable(ctx.pool);
  const common = {
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    connections,
  };
  await closedLoop({ ...common, seconds: 3 });
  const { run, usage, answered, cpuMsPerAnswer } = await measuredClosedLoop(
    server.pid,
    { ...common, seconds },
  );
  const { p50, p99 } = summarize(run.latencies);
  return {
    rps: run.okIds.length / run.seconds,
    p50,
    p99,
    cpuMs: cpuMsPerAnswer,
    rssMb: usage.peakRssMb,
    failed: answered - run.okIds.length + run.socketErrors + run.timeouts,
  };
}

const show = (name, r) =>
  `${name.padEnd(8)} ${r.rps.toFixed(0).padStart(5)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
  `CPU ${r.cpuMs.toFixed(3)} ms/req, peak RSS ${r.rssMb.toFixed(0)} MB, failed ${r.failed}`;

async function main() {
  await mkdir(dirname(SERVICE_LOG), { recursive: true });
  await writeFile(SERVICE_LOG, '');
  await writeFile(SERVICE_B_LOG, '');
  const database = await openDatabase(log);
  const pool = harnessPool(database.url);
  const token = newToken();
  const common = { DATABASE_URL: database.url, API_TOKENS: token };
  let service;
  let serviceB;
  let baseline;
  try {
    // The service first: its migration creates the table the baseline expects.
    service = await start('service', [...nodeFlags, SERVICE_MAIN], common);
    if (versus !== undefined)
      serviceB = await start(
        'service B',
        [...versus.nodeFlags, versus.main],
        common,
      );
    baseline = await start('baseline', [BASELINE_SERVER], common);
    log(
      `service on ${runtimeOf(service.pid)}${nodeFlags.length ? ` with ${nodeFlags.join(' ')}` : ''}, ` +
        `baseline on ${runtimeOf(baseline.pid)}; c=${connections}, ${seconds} s per round`,
    );
    const ctx = { pool, token, workload: createWorkload() };
    const ratios = { rps: [], cpuMs: [], p50: [] };
    const ratiosB = { rps: [], cpuMs: [], p50: [], versusA: [] };
    for (let round = 0; round < options.runs; round += 1) {
      const b = await measure(ctx, baseline);
      // With a service B, the order of A and B alternates from round to round.
      const bFirst = serviceB !== undefined && round % 2 === 1;
      const sB0 = bFirst ? await measure(ctx, serviceB) : undefined;
      const s = await measure(ctx, service);
      const sB =
        sB0 ??
        (serviceB === undefined ? undefined : await measure(ctx, serviceB));
      for (const key of Object.keys(ratios)) ratios[key].push(s[key] / b[key]);
      process.stdout.write(
        `round ${round + 1}: ${show('baseline', b)}\n         ${show('service', s)}\n` +
          `         service/baseline: req/s ${(s.rps / b.rps).toFixed(2)}x, CPU/req ${(s.cpuMs / b.cpuMs).toFixed(2)}x, p50 ${(s.p50 / b.p50).toFixed(2)}x\n`,
      );
      if (sB !== undefined) {
        for (const key of Object.keys(ratios))
          ratiosB[key].push(sB[key] / b[key]);
        ratiosB.versusA.push(sB.cpuMs / s.cpuMs);
        process.stdout.write(
          `         ${show('B', sB)}\n` +
            `         B/baseline: req/s ${(sB.rps / b.rps).toFixed(2)}x, CPU/req ${(sB.cpuMs / b.cpuMs).toFixed(2)}x; B/A CPU/req ${(sB.cpuMs / s.cpuMs).toFixed(3)}\n`,
        );
      }
    }
    process.stdout.write(
      `median of rounds: req/s ${median(ratios.rps).toFixed(2)}x, CPU/req ${median(ratios.cpuMs).toFixed(2)}x, ` +
        `p50 ${median(ratios.p50).toFixed(2)}x; service peak RSS ${highWaterMb(service.pid).toFixed(0)} MB (lifetime), ` +
        `baseline ${highWaterMb(baseline.pid).toFixed(0)} MB\n`,
    );
    if (serviceB !== undefined)
      process.stdout.write(
        `B: median req/s ${median(ratiosB.rps).toFixed(2)}x, CPU/req ${median(ratiosB.cpuMs).toFixed(2)}x the baseline; ` +
          `B/A CPU/req ${median(ratiosB.versusA).toFixed(3)} (each round: ${ratiosB.versusA.map((r) => r.toFixed(2)).join(' ')}); ` +
          `B peak RSS ${highWaterMb(serviceB.pid).toFixed(0)} MB (lifetime)\n`,
      );
  } finally {
    await Promise.all([service?.stop(), serviceB?.stop(), baseline?.stop()]);
    await pool.end();
    await database.close();
  }
}

await main();
