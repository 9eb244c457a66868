// What tracing costs the service (issue 43), in the production topology: the service alone
// on core 1; PostgreSQL, the load (autocannon, in this process) and an OTLP sink on core 0,
// as the collector is another machine in production. Variants: tracing off (the default,
// no SDK loaded), on with every request sampled, on at 1% (parentbased_traceidratio), and on
// with none sampled (always_off: what the SDK's presence alone costs), each exporting
// OTLP/HTTP protobuf to the sink; with `versus`, a build from before tracing too (today's
// service, to show what "off" costs). Each round runs one turn per variant, the order
// rotating; each turn (bench/lib/pinned-turn.mjs) starts a fresh service on an empty table,
// warms it up, then measures the CPU per create at c=64. Printed per round and as medians of
// the per-round ratios to "off".
import { createServer } from 'node:http';
import { join } from 'node:path';
import { RESULTS, SERVICE_MAIN, serviceMainOf } from './paths.mjs';
import {
  pinLoadAndDatabase,
  pinnedTurn,
  rotatingRounds,
} from './pinned-turn.mjs';
import { median } from './stats.mjs';

const CONNECTIONS = 64;

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
    { name: 'off', main: SERVICE_MAIN, env: {} },
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

async function turn(ctx, variant, { warmupSeconds, seconds }) {
  const measured = await pinnedTurn(
    ctx,
    { ...variant, name: `service, tracing ${variant.name}` },
    {
      flags: ctx.serviceFlags,
      connections: CONNECTIONS,
      warmupSeconds,
      seconds,
      logFile: join(RESULTS, 'tracing-cost-service.log'),
    },
  );
  return {
    cpuUsPerCreate: measured.cpuMsPerAnswer * 1000,
    // The main thread's share apart: V8's compiler and GC helpers, libuv's pool and the
    // exporter's work off the main thread are the rest.
    mainThreadUsPerCreate: measured.mainThreadCpuMsPerAnswer * 1000,
    rps: measured.run.okIds.length / measured.run.seconds,
    errors: measured.answered - measured.run.okIds.length,
  };
}

/**
 * `rounds` rounds of the variants; the CPU per create of each turn, and each variant's
 * median ratio to tracing off in the same round.
 */
export async function tracingCost(
  ctx,
  { rounds, warmupSeconds, seconds, versus, log },
) {
  const sink = await startOtlpSink();
  const variants = variantsOf(sink.endpoint, versus);
  const turns = Object.fromEntries(variants.map(({ name }) => [name, []]));
  const unpin = pinLoadAndDatabase(ctx);
  try {
    await rotatingRounds(variants, rounds, async (variant, round) => {
      const result = await turn(ctx, variant, { warmupSeconds, seconds });
      turns[variant.name].push(result);
      log(
        `tracing round ${round + 1}, ${variant.name}: ${result.cpuUsPerCreate.toFixed(0)} us CPU per create ` +
          `(${result.mainThreadUsPerCreate.toFixed(0)} on the main thread), ` +
          `${result.rps.toFixed(0)} req/s, ${result.errors} errors`,
      );
    });
  } finally {
    unpin();
    await sink.close();
  }
  const summary = variants.map(({ name }) => {
    const ratios = turns[name].map(
      (result, round) =>
        result.cpuUsPerCreate / turns.off[round].cpuUsPerCreate,
    );
    return {
      name,
      cpuUsPerCreate: median(turns[name].map((r) => r.cpuUsPerCreate)),
      ratioToOff: median(ratios),
      ratios,
    };
  });
  for (const row of summary)
    log(
      `tracing ${row.name}: median ${row.cpuUsPerCreate.toFixed(0)} us CPU per create, ` +
        `${row.ratioToOff.toFixed(3)}x tracing off (each round: ${row.ratios.map((x) => x.toFixed(3)).join(' ')})`,
    );
  log(`tracing: the OTLP sink took ${sink.exports} exports`);
  return {
    connections: CONNECTIONS,
    warmupSeconds,
    seconds,
    rounds,
    turns,
    summary,
  };
}
