// A quick A/B check for one change: the built service and the baseline, on one embedded
// PostgreSQL, in alternating closed-loop rounds; prints each round and the service's
// ratios to the baseline of the same round (req/s, CPU per request, p50), and peak RSS.
// Single rounds swing by 10% or more on a shared 2-core machine: look at the ratios, repeat,
// and use `npm run bench` for figures worth recording.
//
// The service runs with the Node flags of `npm run start:prod`, then any given after `--`;
// `--no-production-flags` leaves the former out.
//
//   node bench/quick-check.mjs [--connections 64] [--seconds 10] [--runs 2]
//                              [--no-production-flags] [-- node flags...]
//   LOG_LEVEL=warn node bench/quick-check.mjs -- --max-old-space-size=160
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closedLoop } from './closed-loop.mjs';
import { emptyTable, harnessPool, openDatabase } from './database.mjs';
import {
  freePort,
  highWaterMb,
  productionNodeFlags,
  runtimeOf,
  startServer,
  watch,
} from './processes.mjs';
import { median, summarize } from './stats.mjs';
import { createWorkload, newToken } from './workload.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(BENCH);
// The request log goes to a file, as in `npm run bench` (not committed).
const SERVICE_LOG = join(BENCH, 'results', 'check-service.log');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    connections: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '10' },
    runs: { type: 'string', default: '2' },
    // Without the flags of `npm run start:prod`: to measure what they buy.
    'no-production-flags': { type: 'boolean', default: false },
  },
});
const nodeFlags = [
  ...(values['no-production-flags'] ? [] : productionNodeFlags(ROOT)),
  ...positionals,
];
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const log = (message) => process.stderr.write(`[check] ${message}\n`);

async function start(name, args, env) {
  const port = await freePort();
  return startServer({
    name,
    args,
    port,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_FORMAT: 'json',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...env,
    },
    logFile: name === 'service' ? SERVICE_LOG : undefined,
  });
}

async function measure(ctx, server) {
  await emptyTable(ctx.pool);
  const common = {
    url: server.url,
    token: ctx.token,
    workload: ctx.workload,
    connections,
  };
  await closedLoop({ ...common, seconds: 3 });
  const watcher = watch(server.pid);
  const run = await closedLoop({ ...common, seconds });
  const usage = watcher.stop();
  const served = Object.values(run.statuses).reduce((a, b) => a + b, 0);
  const { p50, p99 } = summarize(run.latencies);
  return {
    rps: run.okIds.length / run.seconds,
    p50,
    p99,
    cpuMs: (usage.cpuSeconds * 1000) / served,
    rssMb: usage.peakRssMb,
    failed: served - run.okIds.length + run.socketErrors + run.timeouts,
  };
}

const show = (name, r) =>
  `${name.padEnd(8)} ${r.rps.toFixed(0).padStart(5)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(1)} ms, ` +
  `CPU ${r.cpuMs.toFixed(3)} ms/req, peak RSS ${r.rssMb.toFixed(0)} MB, failed ${r.failed}`;

async function main() {
  await mkdir(dirname(SERVICE_LOG), { recursive: true });
  await writeFile(SERVICE_LOG, '');
  const database = await openDatabase({ root: ROOT, log });
  const pool = harnessPool(database.url);
  const token = newToken();
  const common = { DATABASE_URL: database.url, API_TOKENS: token };
  let service;
  let baseline;
  try {
    // The service first: its migration creates the table the baseline expects.
    service = await start(
      'service',
      [...nodeFlags, join(ROOT, 'dist/main.js')],
      common,
    );
    baseline = await start(
      'baseline',
      [join(BENCH, 'baseline-server.mjs')],
      common,
    );
    log(
      `service on ${runtimeOf(service.pid)}${nodeFlags.length ? ` with ${nodeFlags.join(' ')}` : ''}, ` +
        `baseline on ${runtimeOf(baseline.pid)}; c=${connections}, ${seconds} s per round`,
    );
    const ctx = { pool, token, workload: createWorkload() };
    const ratios = { rps: [], cpuMs: [], p50: [] };
    for (let round = 0; round < Number(values.runs); round += 1) {
      const b = await measure(ctx, baseline);
      const s = await measure(ctx, service);
      for (const key of Object.keys(ratios)) ratios[key].push(s[key] / b[key]);
      process.stdout.write(
        `round ${round + 1}: ${show('baseline', b)}\n         ${show('service', s)}\n` +
          `         service/baseline: req/s ${(s.rps / b.rps).toFixed(2)}x, CPU/req ${(s.cpuMs / b.cpuMs).toFixed(2)}x, p50 ${(s.p50 / b.p50).toFixed(2)}x\n`,
      );
    }
    process.stdout.write(
      `median of rounds: req/s ${median(ratios.rps).toFixed(2)}x, CPU/req ${median(ratios.cpuMs).toFixed(2)}x, ` +
        `p50 ${median(ratios.p50).toFixed(2)}x; service peak RSS ${highWaterMb(service.pid).toFixed(0)} MB (lifetime), ` +
        `baseline ${highWaterMb(baseline.pid).toFixed(0)} MB\n`,
    );
  } finally {
    await Promise.all([service?.stop(), baseline?.stop()]);
    await pool.end();
    await database.close();
  }
}

await main();
