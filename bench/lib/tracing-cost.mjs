// What tracing costs the service (issue 43), in the production topology's split: the services
// on core 1; PostgreSQL, the load (autocannon, in this process) and an OTLP sink on core 0,
// as the collector is another machine in production. Variants: on with every request sampled,
// on at 1% (parentbased_traceidratio), and on with none sampled (always_off: what the SDK's
// presence alone costs), each exporting OTLP/HTTP protobuf to the sink; with `versus`, a build
// from before tracing too (to show what "off" costs). Each variant is measured beside tracing
// off (the default, no SDK loaded): both fresh on an empty table, both on core 1 at once
// (bench/lib/pinned-turn.mjs, pinnedTurns), warmed up and measured over the same windows, so
// that the host's swings, which move turns one after another by a third, fall on both. Each
// round has one such pair per variant, the order rotating; printed per pair and as medians
// of the pairs' ratios.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { RESULTS, SERVICE_MAIN, serviceMainOf } from './paths.mjs';
import {
  pinLoadAndDatabase,
  pinnedTurns,
  rotatingRounds,
} from './pinned-turn.mjs';
import { median } from './stats.mjs';

// Each service's closed loop; two services share core 1, at about half a core each.
const CONNECTIONS = 32;
const OFF = 'off';

/** A collector that takes every export and answers at once (OTLP's empty success). */
export async function startOtlpSink() {
  let exports = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      exports += 1;
      response.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    get exports() {
      return exports;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The service's settings for tracing exported as OTLP/HTTP protobuf to `endpoint`. */
export function tracingSettings(endpoint, sampler, ratio) {
  return {
    OTEL_SERVICE_NAME: 'plant-store-bench',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: sampler,
    OTEL_TRACES_SAMPLER_ARG: ratio,
  };
}

function variantsOf(endpoint, versus) {
  const traced = (sampler, ratio) => tracingSettings(endpoint, sampler, ratio);
  return [
    { name: OFF, main: SERVICE_MAIN, env: {} },
    {
      name: 'on, 100%',
      main: SERVICE_MAIN,
      env: traced('parentbased_always_on', '1'),
    },
    {
      name: 'on, 1%',
      main: SERVICE_MAIN,
      env: traced('parentbased_traceidratio', '0.01'),
    },
    // The SDK loaded and nothing sampled: what its presence alone costs a create (the
    // context manager, pg's instrumentation, the server span's decision), apart from the
    // 1% that are recorded and exported.
    {
      name: 'on, none sampled',
      main: SERVICE_MAIN,
      env: traced('always_off', '1'),
    },
    ...(versus === undefined
      ? []
      : [{ name: 'before tracing', main: serviceMainOf(versus), env: {} }]),
  ];
}

/**
 * `variant` and tracing off, side by side: each one's CPU per create over the same windows.
 * `offFirst` says which starts first (and so has the older process): the rounds alternate it.
 */
async function pair(ctx, [off, variant], { warmupSeconds, seconds, offFirst }) {
  const order = offFirst ? [off, variant] : [variant, off];
  const inOrder = await pinnedTurns(
    ctx,
    order.map((server) => ({
      ...server,
      name: `service, tracing ${server.name}`,
    })),
    {
      flags: ctx.serviceFlags,
      connections: CONNECTIONS,
      warmupSeconds,
      seconds,
      logFile: join(RESULTS, 'tracing-cost-service.log'),
    },
  );
  const measured = offFirst ? inOrder : [...inOrder].reverse();
  const [offSide, tracedSide] = measured.map((window) => ({
    cpuUsPerCreate: window.cpuMsPerAnswer * 1000,
    // The main thread's share apart: V8's compiler and GC helpers, libuv's pool and the
    // exporter's work off the main thread are the rest.
    mainThreadUsPerCreate: window.mainThreadCpuMsPerAnswer * 1000,
    rps: window.run.okIds.length / window.run.seconds,
    errors: window.answered - window.run.okIds.length,
  }));
  return {
    off: offSide,
    traced: tracedSide,
    ratio: tracedSide.cpuUsPerCreate / offSide.cpuUsPerCreate,
  };
}

/**
 * `rounds` rounds of pairs, one per variant beside tracing off; each variant's CPU per create
 * and its median ratio to tracing off's in the same pair.
 */
export async function tracingCost(
  ctx,
  { rounds, warmupSeconds, seconds, versus, log },
) {
  const sink = await startOtlpSink();
  const variants = variantsOf(sink.endpoint, versus);
  const off = variants.find(({ name }) => name === OFF);
  const traced = variants.filter((variant) => variant !== off);
  const pairs = Object.fromEntries(traced.map(({ name }) => [name, []]));
  const unpin = pinLoadAndDatabase(ctx);
  const usPerCreate = (side) =>
    `${side.cpuUsPerCreate.toFixed(0)} us CPU per create (${side.mainThreadUsPerCreate.toFixed(0)} on the main thread, ` +
    `${side.rps.toFixed(0)} req/s, ${side.errors} errors)`;
  try {
    await rotatingRounds(traced, rounds, async (variant, round) => {
      const result = await pair(ctx, [off, variant], {
        warmupSeconds,
        seconds,
        offFirst: round % 2 === 0,
      });
      pairs[variant.name].push(result);
      log(
        `tracing round ${round + 1}, ${variant.name}: ${usPerCreate(result.traced)}; ` +
          `beside it, off: ${usPerCreate(result.off)}; ${result.ratio.toFixed(3)}x`,
      );
    });
  } finally {
    unpin();
    await sink.close();
  }
  const offSides = Object.values(pairs).flatMap((list) =>
    list.map((result) => result.off.cpuUsPerCreate),
  );
  const summary = [
    {
      name: OFF,
      cpuUsPerCreate: median(offSides),
      ratioToOff: 1,
      ratios: offSides.map(() => 1),
    },
    ...traced.map(({ name }) => {
      const ratios = pairs[name].map(({ ratio }) => ratio);
      return {
        name,
        cpuUsPerCreate: median(
          pairs[name].map((result) => result.traced.cpuUsPerCreate),
        ),
        ratioToOff: median(ratios),
        ratios,
      };
    }),
  ];
  for (const row of summary.slice(1))
    log(
      `tracing ${row.name}: median ${row.cpuUsPerCreate.toFixed(0)} us CPU per create, ` +
        `${row.ratioToOff.toFixed(3)}x tracing off beside it (each round: ${row.ratios.map((x) => x.toFixed(3)).join(' ')})`,
    );
  log(`tracing: the OTLP sink took ${sink.exports} exports`);
  return {
    connections: CONNECTIONS,
    warmupSeconds,
    seconds,
    rounds,
    pairs,
    summary,
  };
}
