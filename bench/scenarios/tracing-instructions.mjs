// What tracing costs a create in instructions, not time (issue 43): this host's CPU time per
// create moves by a third between turns with its neighbours, and it has no hardware counters
// for perf. Each variant's service runs under valgrind's callgrind: after the warm-up,
// `callgrind_control` zeroes the counters, and dumps them after each window of `--window`
// creates, so the start-up and the stop are not counted. Each window is a figure; the median
// of the `--windows` is the variant's. A window holds a few of V8's major collections or none,
// which is what moves it. Slow (the service runs some 50 times slower): about 4 minutes a
// variant with the defaults on a quiet machine.
//
//   npm run build && node bench/scenarios/tracing-instructions.mjs [--window 1500]
//       [--windows 3] [--warmup 1000] [--connections 16] [--variants off,none,one,all]
//
// Needs valgrind (Debian's `valgrind`, with callgrind_control). Prints each window and the
// per-create figures as JSON.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort } from '../../test-kit/free-port.mjs';
import { commandLine, logger, printRecord } from '../lib/cli.mjs';
import { ROOT, SERVICE_MAIN } from '../lib/paths.mjs';
import { median } from '../lib/stats.mjs';
import { startOtlpSink, tracingSettings } from '../lib/tracing-cost.mjs';

const options = commandLine({
  numbers: { window: 2000, windows: 3, warmup: 3000, connections: 16 },
  strings: { variants: 'off,none,one,all' },
});
const log = logger('tracing-instructions');
execFileSync('valgrind', ['--version']);
execFileSync('callgrind_control', ['--version']);

const { startPlantStore } = await import(
  pathToFileURL(join(ROOT, 'dist', 'service', 'testing', 'index.js')).href
);
// The database and the token; the store's own service is not measured.
const store = await startPlantStore();
const sink = await startOtlpSink();
const traced = (sampler, ratio) =>
  tracingSettings(sink.endpoint, sampler, ratio);
const VARIANTS = {
  off: {},
  none: traced('always_off', '1'),
  one: traced('parentbased_traceidratio', '0.01'),
  all: traced('parentbased_always_on', '1'),
};
// Under valgrind a create takes tens of milliseconds: no deadline may refuse one.
const PATIENT = {
  DATABASE_REQUEST_TIMEOUT_MS: '60000',
  DATABASE_QUERY_TIMEOUT_MS: '60000',
  DATABASE_CONNECT_TIMEOUT_MS: '60000',
  INSERT_QUEUE_WAIT_MS: '60000',
  CREATE_WAITING_TIMEOUT_MS: '60000',
  CREATE_EVENT_LOOP_DELAY_LIMIT_MS: '0',
};
// The service's V8 flags on the command line: it would otherwise execve itself, out of valgrind.
const { SERVICE_V8_FLAGS } = await import(
  pathToFileURL(join(ROOT, 'dist', 'service', 'v8-flags.js')).href
);

let nextId = 1n;
async function creates(url, count) {
  let sent = 0;
  let created = 0;
  const statuses = {};
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (sent < count) {
        sent += 1;
        const answer = await fetch(`${url}/plants`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${store.token}`,
            'Content-Type': 'application/json',
          },
          body: `{"id": ${nextId++}, "name": "Fern", "tag": "green"}`,
        });
        await answer.arrayBuffer();
        if (answer.status === 200) created += 1;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      }
    }),
  );
  return { created, statuses };
}

const HOST = '127.0.0.1';

/** Instructions per create in each window of one service's life, the warm-up and start not counted. */
async function instructionsPerCreate(variant, folder) {
  await store.reset();
  const port = await freePort();
  const out = join(folder, `${variant}.callgrind`);
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      ...SERVICE_V8_FLAGS,
      SERVICE_MAIN,
    ],
    {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: store.databaseUrl,
        API_TOKENS: store.token,
        PORT: String(port),
        HOST,
        LOG_LEVEL: 'warn',
        ...PATIENT,
        ...VARIANTS[variant],
      },
      stdio: 'ignore',
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // vgdb finds the service by a name that holds the HOST of its environment.
  const control = (command) =>
    execFileSync('callgrind_control', [command, String(child.pid)], {
      env: { ...process.env, HOST },
      stdio: 'ignore',
    });
  try {
    const url = `http://${HOST}:${port}`;
    const deadline = Date.now() + 600_000;
    while (
      (await fetch(`${url}/health/ready`).catch(() => undefined))?.status !==
      200
    ) {
      if (Date.now() > deadline) throw new Error(`${variant}: never ready`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await creates(url, options.warmup);
    control('--zero');
    const perWindow = [];
    for (let window = 1; window <= options.windows; window += 1) {
      const { created, statuses } = await creates(url, options.window);
      control('--dump');
      if (created !== options.window)
        throw new Error(
          `${variant}: ${created} of ${options.window} created (answers by status: ${JSON.stringify(statuses)})`,
        );
      // Each dump holds what ran since the one before it.
      const total = /^totals: (\d+)/m.exec(
        await readFile(`${out}.${window}`, 'utf8'),
      );
      if (total === null)
        throw new Error(`${variant}: no totals in dump ${window}`);
      perWindow.push(Number(total[1]) / options.window);
    }
    return perWindow;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

const folder = await mkdtemp(join(tmpdir(), 'tracing-instructions-'));
const started = new Date().toISOString();
const perCreate = {};
const windows = {};
try {
  for (const variant of options.variants.split(',')) {
    const perWindow = await instructionsPerCreate(variant, folder);
    perCreate[variant] = median(perWindow);
    windows[variant] = perWindow.map(Math.round);
    log(
      `${variant}: ${windows[variant].join(', ')} instructions a create by window, median ${Math.round(perCreate[variant])}`,
    );
  }
} finally {
  await store.stop();
  await sink.close();
  await rm(folder, { recursive: true, force: true });
}
const off = perCreate.off;
printRecord(started, {
  instructionsPerCreate: Object.fromEntries(
    Object.entries(perCreate).map(([name, value]) => [
      name,
      {
        value: Math.round(value),
        windows: windows[name],
        ratioToOff:
          off === undefined ? undefined : Number((value / off).toFixed(3)),
      },
    ]),
  ),
});
