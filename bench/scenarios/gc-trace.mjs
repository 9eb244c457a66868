// What the garbage collector does to the service under a steady load: the built service,
// with production's flags and V8's --trace-gc-nvp, gets an open loop of creates (3 s of
// warm-up, then the measured seconds); prints the latency the clients saw and, for the
// measured window, the scavenges (how many, their pauses, what each promoted to the old
// generation) and the full collections. Objects that outlive two scavenges are promoted,
// and promoted garbage is what full collections, the open loop's tail, are made of.
//
//   node bench/scenarios/gc-trace.mjs [--rate 3000] [--seconds 10] [--runs 1] [-- node flags...]
import { mkdir, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { commandLine, logger } from '../lib/cli.mjs';
import { emptyTable, harnessPool, openDatabase } from '../lib/database.mjs';
import { openLoop } from '../lib/open-loop.mjs';
import { RESULTS } from '../lib/paths.mjs';
import { runtimeOf, serviceArgs, startServer } from '../lib/servers.mjs';
import { median } from '../lib/stats.mjs';
import { createWorkload, newToken } from '../lib/workload.mjs';

// The request log and V8's trace share stdout; both go here (not committed).
const SERVICE_LOG = join(RESULTS, 'gc-trace-service.log');

const options = commandLine({
  numbers: { rate: 3000, seconds: 10, runs: 1 },
  rest: true,
});
const log = logger('gc-trace');

/** The name=value pairs of one --trace-gc-nvp line (gc=s: a scavenge, gc=mc: a full one). */
function traceEvent(line) {
  const fields = {};
  for (const [, name, value] of line.matchAll(/ ([a-z_.]+)=([^ ]+)/g))
    fields[name] = value;
  return fields;
}

async function linesBetween(path, from, to) {
  const file = await open(path);
  try {
    const buffer = Buffer.alloc(to - from);
    await file.read(buffer, 0, buffer.length, from);
    return buffer.toString('utf8').split('\n');
  } finally {
    await file.close();
  }
}

function collections(lines) {
  const events = lines.filter((line) => / gc=/.test(line)).map(traceEvent);
  const of = (kind) => events.filter((event) => event.gc === kind);
  const numbers = (list, field) => list.map((event) => Number(event[field]));
  const scavenges = of('s');
  const full = of('mc');
  return {
    scavenges: scavenges.length,
    scavengePauseMs: median(numbers(scavenges, 'pause')),
    promotedKb: median(numbers(scavenges, 'promoted')) / 1024,
    survivedKb: median(numbers(scavenges, 'new_space_survived')) / 1024,
    full: full.length,
    fullPauseMs: full.length === 0 ? 0 : median(numbers(full, 'pause')),
  };
}

async function main() {
  const database = await openDatabase(log);
  const pool = harnessPool(database.url);
  const token = newToken();
  const args = serviceArgs(['--trace-gc-nvp', ...options.rest]);
  let service;
  try {
    await mkdir(dirname(SERVICE_LOG), { recursive: true });
    await open(SERVICE_LOG, 'w').then((file) => file.close());
    service = await startServer({
      name: 'service',
      args,
      env: { DATABASE_URL: database.url, API_TOKENS: token },
      logFile: SERVICE_LOG,
    });
    log(
      `service on ${runtimeOf(service.pid)} with ${args.slice(0, -1).join(' ')}`,
    );
    for (let run = 1; run <= options.runs; run += 1) {
      await emptyTable(pool);
      let measuredFrom = 0;
      const result = await openLoop({
        url: service.url,
        token,
        workload: createWorkload(),
        rate: options.rate,
        seconds: options.seconds,
        warmupSeconds: 3,
        onMeasureStart: () =>
          stat(SERVICE_LOG).then(({ size }) => (measuredFrom = size)),
      });
      const { size } = await stat(SERVICE_LOG);
      const gc = collections(
        await linesBetween(SERVICE_LOG, measuredFrom, size),
      );
      const { p50, p99, p999 } = result.latency;
      process.stdout.write(
        `run ${run}: ${result.achievedRate.toFixed(0)}/s of ${options.rate}/s, ` +
          `p50/p99/p99.9 ${p50.toFixed(2)}/${p99.toFixed(1)}/${p999.toFixed(1)} ms; ` +
          `${gc.scavenges} scavenges (median pause ${gc.scavengePauseMs.toFixed(1)} ms, ` +
          `promoted ${gc.promotedKb.toFixed(0)} kB, survived ${gc.survivedKb.toFixed(0)} kB), ` +
          `${gc.full} full collections (median pause ${gc.fullPauseMs.toFixed(1)} ms)\n`,
      );
    }
  } finally {
    await service?.stop();
    await pool.end();
    await database.close();
  }
}

await main();
