// Which of the service's files one create runs through (issue 34 item 5): the built service
// started as production starts it, with V8's precise coverage taken through the inspector
// around a single POST /plants after a warm-up, so start-up code does not count. A file is
// on the path when any of its functions ran during that create; its lines are those of its
// TypeScript source.
//
//   node bench/scenarios/create-path.mjs [--dist DIR] [--src DIR] [--list]
//
// --dist: a build (default: this repository's dist/); --src: the source tree it was built
// from (default: src/ beside it); --list prints the files. Writes nothing to RESULTS.md.
import { readFileSync, rmSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openDatabase } from '../lib/database.mjs';
import { RESULTS, ROOT, serviceMainOf } from '../lib/paths.mjs';
import {
  benchmarkSettings,
  serviceArgs,
  startServer,
} from '../lib/servers.mjs';

const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: join(ROOT, 'dist') },
    src: { type: 'string' },
    list: { type: 'boolean', default: false },
  },
});
const dist = options.dist;
const src = options.src ?? join(dirname(dist), 'src');
const TOKEN = 'create-path-token-0123456789';
const WARM_UP_CREATES = 50;
// Measured creates: a file counts when it ran in every one of them, so that a timer of the
// service's own (the token store's resync, say) that fires during one does not count.
const MEASURED_CREATES = 3;

const log = (line) => process.stderr.write(`[create-path] ${line}\n`);

/** One DevTools protocol session over the inspector's WebSocket. */
async function inspector(url) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let next = 0;
  const waiting = new Map();
  socket.addEventListener('message', ({ data }) => {
    const message = JSON.parse(data);
    const pending = waiting.get(message.id);
    if (pending === undefined) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(message.error.message));
    else pending.resolve(message.result);
  });
  return {
    call(method, params = {}) {
      next += 1;
      const id = next;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) =>
        waiting.set(id, { resolve, reject }),
      );
    },
    close: () => socket.close(),
  };
}

async function until(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function create(base, id, requestId = `create-path-${id}`) {
  const response = await fetch(`${base}/plants`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'x-request-id': requestId,
    },
    body: JSON.stringify({ id, name: 'Fern', tag: 'shade' }),
  });
  if (response.status !== 200)
    throw new Error(`create ${id} answered ${response.status}`);
  await response.text();
}

const database = await openDatabase(log);
const serviceLog = join(RESULTS, 'create-path-service.log');
rmSync(serviceLog, { force: true });
// As production starts it: without its V8 flags it starts over with them (the same pid, a
// new inspector), so the inspector to take is the last one Node announced before readiness.
const server = await startServer({
  name: 'service',
  args: serviceArgs(['--inspect=127.0.0.1:0'], serviceMainOf(dist)),
  env: benchmarkSettings(database.url, TOKEN),
  logFile: serviceLog,
});
try {
  const [inspectorUrl] = server.output
    .flatMap((line) => /ws:\/\/\S+/.exec(line) ?? [])
    .slice(-1);
  const session = await inspector(inspectorUrl);
  const base = server.url;
  await session.call('Profiler.enable');
  await session.call('Profiler.startPreciseCoverage', { callCount: true });
  const firstId = Date.now() * 1000;
  for (let i = 0; i < WARM_UP_CREATES; i += 1) await create(base, firstId + i);
  const distUrl = pathToFileURL(dist).href + '/';
  const ran = (result) =>
    result
      .filter(({ url }) => url.startsWith(distUrl) && url.endsWith('.js'))
      .filter(({ functions }) =>
        functions.some(({ ranges }) => ranges[0].count > 0),
      )
      .map(({ url }) => url.slice(distUrl.length).replace(/\.js$/, '.ts'));
  let files;
  for (let i = 1; i <= MEASURED_CREATES; i += 1) {
    await session.call('Profiler.takePreciseCoverage'); // resets the counts
    const requestId = `create-path-measured-${i}`;
    await create(base, firstId + WARM_UP_CREATES + i, requestId);
    // The request log's line is written when the response closes: wait for it.
    await until('the request log line', async () =>
      readFileSync(serviceLog, 'utf8').includes(requestId),
    );
    const { result } = await session.call('Profiler.takePreciseCoverage');
    const now = new Set(ran(result));
    files =
      files === undefined
        ? now
        : new Set([...files].filter((file) => now.has(file)));
  }
  session.close();
  files = [...files].sort();
  const lines = (file) =>
    readFileSync(join(src, file), 'utf8').split('\n').length - 1;
  const total = files.reduce((sum, file) => sum + lines(file), 0);
  const folders = new Set(files.map((file) => dirname(file)));
  if (options.list)
    for (const file of files) console.log(`${file} ${lines(file)}`);
  console.log(
    JSON.stringify({
      build: relative(process.cwd(), dist) || '.',
      files: files.length,
      lines: total,
      folders: folders.size,
    }),
  );
} finally {
  await server.stop();
  await database.close();
}
