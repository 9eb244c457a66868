// A quick A/B check for one change: the built service alone, on its own embedded
// PostgreSQL, closed loop at one concurrency; prints req/s, latency, CPU per request and
// peak RSS. Single runs swing by about 10% on a shared 2-core machine: repeat, and use
// `npm run bench` for figures worth recording.
//
//   node bench/quick-check.mjs [--connections 64] [--seconds 10] [--runs 2] [-- node flags...]
//   LOG_LEVEL=warn node bench/quick-check.mjs -- --max-old-space-size=160
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    connections: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '10' },
    runs: { type: 'string', default: '1' },
  },
});
const nodeFlags = positionals;
const CLOCK_TICKS = 100;

async function cpuTicks(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function peakRssMb(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)[1]) / 1024);
}

let nextId = BigInt(Date.now()) * 1000n;
function load(url, token, seconds) {
  return autocannon({
    url: `${url}/plants`,
    connections: Number(values.connections),
    duration: seconds,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
    },
    requests: [
      {
        method: 'POST',
        setupRequest(request) {
          nextId += 1n;
          return {
            ...request,
            body: `{"id": ${nextId}, "name": "Monstera deliciosa", "tag": "tropical"}`,
          };
        },
      },
    ],
  });
}

async function once(run) {
  const dataDir = join(tmpdir(), `plant-store-quick-check-${process.pid}`);
  const port = 3000 + (process.pid % 1000) + run;
  const child = spawn(process.execPath, [...nodeFlags, 'dist/main.js'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_FORMAT: 'json',
      DATA_DIR: dataDir,
      EMBEDDED_DATABASE_PORT: String(5400 + (process.pid % 90)),
      HOST: '127.0.0.1',
      PORT: String(port),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let attempt = 0; ; attempt += 1) {
      const ready = await fetch(`${url}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (attempt > 300) throw new Error('the service did not start');
      await sleep(100);
    }
    const token = (await readFile(join(dataDir, 'dev-token'), 'utf8')).trim();
    await load(url, token, 3);
    const before = await cpuTicks(child.pid);
    const result = await load(url, token, Number(values.seconds));
    const ticks = (await cpuTicks(child.pid)) - before;
    const served = result.requests.total;
    process.stdout.write(
      `run ${run + 1}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, ` +
        `p99 ${result.latency.p99} ms, CPU ${((ticks * 1000) / CLOCK_TICKS / served).toFixed(3)} ms/req, ` +
        `peak RSS ${await peakRssMb(child.pid)} MB, non-2xx ${result.non2xx}, errors ${result.errors}\n`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

for (let run = 0; run < Number(values.runs); run += 1) await once(run);
