// The c=1 latency of several servers, alternated at a fine grain so that other work on a
// busy machine stretches them alike (issue 32: the c=1 p50 against the hand-written
// server's). All servers run at once, each pinned to core 1 (idle but for its turn),
// PostgreSQL and this client on core 0 (the production topology). After a 3 s warm-up of
// each at c=64 (wrk), --slices times: each server in turn (the order rotating) gets
// --slice-ms of creates, one at a time over one keep-alive connection, each timed from its
// write to the last byte of its answer. Prints, per server, the percentiles over all its
// requests and the median over slices of each slice's p50, and each server's ratios to the
// first one.
//
//   taskset -c 0 node bench/scenarios/c1-ab.mjs [--slices 40] [--slice-ms 500]
//     [--servers service,baseline,grouping] [--builds NAME=DIR,...]
import net from 'node:net';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { percentile } from '../../test-kit/percentile.mjs';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { commandLine, logger } from '../lib/cli.mjs';
import {
  emptyTable,
  harnessPool,
  openDatabase,
  waitForQuiet,
} from '../lib/database.mjs';
import { BASELINE_SERVER, RESULTS, serviceMainOf } from '../lib/paths.mjs';
import {
  benchmarkSettings,
  serviceArgs,
  startServer,
} from '../lib/servers.mjs';
import { postmasterOf } from '../lib/usage.mjs';
import { newToken } from '../lib/workload.mjs';
import { wrkClosedLoop } from '../lib/wrk.mjs';

const options = commandLine({
  numbers: { slices: 40, 'slice-ms': 500 },
  strings: { servers: 'service,baseline,grouping', builds: '' },
});
const log = logger('c1-ab');

const SERVERS = {
  service: { args: serviceArgs() },
  baseline: { args: [BASELINE_SERVER] },
  grouping: { args: [BASELINE_SERVER], env: { GROUP_INSERTS: '1' } },
};
for (const build of options.builds.split(',').filter(Boolean)) {
  const [name, dist] = build.split('=');
  SERVERS[name] = { args: serviceArgs([], serviceMainOf(dist)) };
}

let nextId = BigInt(Date.now()) * 1000n;

/** One keep-alive connection that sends a create and resolves with its latency in ms. */
function connection(url, token) {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.setNoDelay(true);
  let waiting;
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = buffer.toString('latin1', 0, headEnd);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (buffer.length < headEnd + 4 + length) return;
    const status = Number(head.slice(9, 12));
    buffer = buffer.subarray(headEnd + 4 + length);
    const done = waiting;
    waiting = undefined;
    done(status);
  });
  const ready = new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    ready,
    async create() {
      nextId += 1n;
      const body = `{"id":${nextId},"name":"Ficus lyrata","tag":"indoor"}`;
      const request =
        `POST /plants HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const started = process.hrtime.bigint();
      const status = await new Promise((resolve) => {
        waiting = resolve;
        socket.write(request);
      });
      if (status !== 200) throw new Error(`answered ${status}`);
      return Number(process.hrtime.bigint() - started) / 1e6;
    },
    close: () => socket.destroy(),
  };
}

async function main() {
  const database = await openDatabase(log);
  const pool = harnessPool(database.url);
  const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
  pinProcessTree(postmasterOf(rows[0].pid), '0');
  const token = newToken();
  const names = options.servers.split(',').filter(Boolean);
  const servers = [];
  try {
    for (const name of names) {
      const server = await startServer({
        name,
        args: SERVERS[name].args,
        env: benchmarkSettings(database.url, token, SERVERS[name].env),
        logFile: join(RESULTS, 'c1-ab-servers.log'),
      });
      pinProcessTree(server.pid, '1');
      servers.push(server);
    }
    await emptyTable(pool);
    for (const server of servers)
      await wrkClosedLoop({
        url: server.url,
        token,
        connections: 64,
        seconds: 3,
        cpu: '0',
      });
    await waitForQuiet(pool);
    const clients = servers.map((server) => connection(server.url, token));
    await Promise.all(clients.map((client) => client.ready));
    const all = names.map(() => []);
    const sliceP50s = names.map(() => []);
    const load = [loadavg()[0]];
    for (let slice = 0; slice < options.slices; slice += 1) {
      for (let k = 0; k < names.length; k += 1) {
        const i = (k + slice) % names.length;
        const times = [];
        const until = Date.now() + options['slice-ms'];
        while (Date.now() < until) times.push(await clients[i].create());
        all[i].push(...times);
        sliceP50s[i].push(percentile(times, 0.5));
      }
    }
    load.push(loadavg()[0]);
    for (const client of clients) client.close();
    log(
      `load average ${load[0].toFixed(2)} -> ${load[1].toFixed(2)}; ${options.slices} slices of ${options['slice-ms']} ms each`,
    );
    log(
      'server            requests    p10    p25    p50    p90  median of slice p50s  (ms)',
    );
    names.forEach((name, i) => {
      const f = (v) => v.toFixed(3).padStart(6);
      log(
        `${name.padEnd(16)} ${String(all[i].length).padStart(9)} ${f(percentile(all[i], 0.1))} ${f(percentile(all[i], 0.25))} ${f(percentile(all[i], 0.5))} ${f(percentile(all[i], 0.9))} ${f(percentile(sliceP50s[i], 0.5))}`,
      );
    });
    for (let i = 1; i < names.length; i += 1) {
      const ratios = sliceP50s[i].map((v, s) => v / sliceP50s[0][s]);
      log(
        `${names[i]} / ${names[0]}: p10 ${(percentile(all[i], 0.1) / percentile(all[0], 0.1)).toFixed(3)}, p50 ${(percentile(all[i], 0.5) / percentile(all[0], 0.5)).toFixed(3)}, median of per-slice p50 ratios ${percentile(ratios, 0.5).toFixed(3)}`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
    await pool.end();
    await database.close();
  }
}

await main();
