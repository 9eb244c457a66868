// What one tracing variant costs a create against another, measured side by side (issue 43).
// This host's CPU time per create moves by a third between turns with its neighbours, so
// turns one after the other cannot resolve a few per cent. Here both services run at once,
// both on core 1 (the load, this process, and PostgreSQL on core 0), each under its own
// closed loop, and each one's CPU per create is read over the same window: whatever the
// neighbours do, they do it to both. Each round starts two fresh test-kit stores; the ratio
// printed is B's CPU per create over A's, and the median of the rounds' ratios.
//
//   npm run build && node bench/scenarios/tracing-paired.mjs [--a off] [--b all]
//       [--a-build DIR] [--b-build DIR] [--rounds 3] [--warmup 5] [--seconds 10]
//       [--connections 32] [--a-env K=V,K=V] [--b-env K=V,K=V] [--windows 1]
//
// A variant is off (no SDK), none (the SDK, nothing sampled), one (1%) or all (100%),
// exported as OTLP/HTTP protobuf to a sink in this process. A build is a checkout with
// `npm run build` done (default: this one), to compare the same variant before and after.
// `--a-env` and `--b-env` add settings to one side, such as an OpenTelemetry SDK variable.
// `--windows N` measures N windows one after another in each round, to see a cost that
// fades as V8 compiles a rarely taken path; a round's ratio is then its last window's.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pinProcessTree } from '../../test-kit/process-tree.mjs';
import { commandLine, logger, printRecord } from '../lib/cli.mjs';
import {
  closedLoop,
  freshLoadOn,
  measuredClosedLoop,
} from '../lib/closed-loop.mjs';
import { ROOT } from '../lib/paths.mjs';
import { median } from '../lib/stats.mjs';
import { startOtlpSink, tracingSettings } from '../lib/tracing-cost.mjs';

const options = commandLine({
  numbers: { rounds: 3, seconds: 10, connections: 32, warmup: 5, windows: 1 },
  strings: {
    a: 'off',
    b: 'all',
    'a-build': ROOT,
    'b-build': ROOT,
    'a-env': '',
    'b-env': '',
  },
});
const log = logger('tracing-paired');
const SERVICE_CPU = '1';
const OTHER_CPU = '0';

const sink = await startOtlpSink();
const SETTINGS = {
  off: {},
  none: tracingSettings(sink.endpoint, 'always_off', '1'),
  one: tracingSettings(sink.endpoint, 'parentbased_traceidratio', '0.01'),
  all: tracingSettings(sink.endpoint, 'parentbased_always_on', '1'),
};
for (const side of ['a', 'b'])
  if (SETTINGS[options[side]] === undefined)
    throw new Error(`--${side} is off, none, one or all`);

/** The pid listening on `url`'s port: the store's service. */
function listenerOf(url) {
  const line = execFileSync('ss', [
    '-ltnpH',
    `sport = :${new URL(url).port}`,
  ]).toString();
  const pid = /pid=(\d+)/.exec(line);
  if (pid === null) throw new Error(`nothing listens on ${url}`);
  return Number(pid[1]);
}

/** Every PostgreSQL server process on this machine (the stores' among them). */
const postgresPids = () =>
  execFileSync('pgrep', ['-f', 'postgres -D'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map(Number);

/** `K=V,K=V` as an object of settings. */
const settingsOf = (text) =>
  Object.fromEntries(
    text
      .split(',')
      .filter((pair) => pair !== '')
      .map((pair) => [
        pair.slice(0, pair.indexOf('=')),
        pair.slice(pair.indexOf('=') + 1),
      ]),
  );

async function startSide(build, variant, extra) {
  const { startPlantStore } = await import(
    pathToFileURL(join(build, 'dist', 'service', 'testing', 'index.js')).href
  );
  const store = await startPlantStore({
    env: { ...SETTINGS[variant], ...settingsOf(extra), LOG_LEVEL: 'warn' },
  });
  const pid = listenerOf(store.url);
  pinProcessTree(pid, SERVICE_CPU);
  return {
    store,
    pid,
    load: freshLoadOn({ url: store.url }, store.token, options.connections),
  };
}

pinProcessTree(process.pid, OTHER_CPU);
const names = {
  a: `${options.a} ${options['a-env']} (${options['a-build']})`,
  b: `${options.b} ${options['b-env']} (${options['b-build']})`,
};
const rounds = [];
const started = new Date().toISOString();
try {
  for (let round = 1; round <= options.rounds; round += 1) {
    const a = await startSide(options['a-build'], options.a, options['a-env']);
    const b = await startSide(options['b-build'], options.b, options['b-env']);
    try {
      for (const pid of postgresPids()) pinProcessTree(pid, OTHER_CPU);
      await Promise.all(
        [a, b].map(({ load }) =>
          closedLoop({ ...load, seconds: options.warmup }),
        ),
      );
      const turn = (measured) => ({
        cpuUsPerCreate: Math.round(measured.cpuMsPerAnswer * 1000),
        mainThreadUsPerCreate: Math.round(
          measured.mainThreadCpuMsPerAnswer * 1000,
        ),
        createsPerSecond: Math.round(
          measured.run.okIds.length / measured.run.seconds,
        ),
      });
      const windows = [];
      for (let window = 1; window <= options.windows; window += 1) {
        const [measuredA, measuredB] = await Promise.all(
          [a, b].map(({ pid, load }) =>
            measuredClosedLoop(pid, { ...load, seconds: options.seconds }),
          ),
        );
        const result = { a: turn(measuredA), b: turn(measuredB) };
        result.ratio = Number(
          (result.b.cpuUsPerCreate / result.a.cpuUsPerCreate).toFixed(3),
        );
        windows.push(result);
        log(
          `round ${round}${options.windows > 1 ? `, window ${window}` : ''}: ` +
            `A ${result.a.cpuUsPerCreate} us a create (${result.a.mainThreadUsPerCreate} on the main thread, ${result.a.createsPerSecond}/s), ` +
            `B ${result.b.cpuUsPerCreate} us (${result.b.mainThreadUsPerCreate}, ${result.b.createsPerSecond}/s), B/A ${result.ratio}`,
        );
      }
      rounds.push({ ...windows.at(-1), windows });
    } finally {
      await Promise.all([a.store.stop(), b.store.stop()]);
    }
  }
} finally {
  await sink.close();
}
printRecord(started, {
  a: names.a,
  b: names.b,
  rounds,
  medianRatio: median(rounds.map(({ ratio }) => ratio)),
});
