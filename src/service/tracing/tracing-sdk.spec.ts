import { Server } from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  context,
  type Context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import { otlpWorkerInThisThread } from '../../../test/support/export-worker-in-thread.js';
import { listening } from '../../../test/support/node-server.js';
import {
  OtlpReceiver,
  statementOf,
} from '../../../test/support/otlp-receiver.js';
import type { Client } from 'pg';
import { INSERT_BATCH_SPAN } from '../../lib/plants/plants-tracer.js';
import type { TracingSettings } from '../config/tracing-settings.js';
import { startTracingSdk } from './tracing-sdk.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

/** A client's span, sampled or not, as its traceparent would bring it. */
const remoteParent = (traceFlags: TraceFlags): Context =>
  trace.setSpanContext(ROOT_CONTEXT, {
    traceId: TRACE_ID,
    spanId: PARENT_ID,
    traceFlags,
    isRemote: true,
  });

/**
 * The SDK as main.ts starts it, exporting to an OTLP receiver in the test. Each test undoes
 * what the SDK registered and it can reach (the API's globals, Node's server emit), then
 * stops it; pg's instrumentation stays hooked on `require`, which is why this spec runs in a
 * process of its own (the unit-isolated project, test/support/vitest-projects.ts).
 */
describe("startTracingSdk: the service's OpenTelemetry SDK", () => {
  const nodeEmit = Reflect.get(Server.prototype, 'emit') as unknown;
  let receiver: OtlpReceiver;
  let stop: (() => Promise<void>) | undefined;

  const start = (changes: Partial<TracingSettings> = {}) => {
    stop = startTracingSdk(
      {
        serviceName: 'plant-store-unit',
        exporter: 'otlp',
        protocol: 'http/json',
        endpoint: `${receiver.endpoint}/v1/traces`,
        sampler: 'parentbased_always_on',
        samplerRatio: 1,
        ...changes,
      },
      otlpWorkerInThisThread,
    );
  };
  /** The SDK's own stop: what was recorded leaves, then nothing more. */
  const stopped = async () => {
    const stopping = stop;
    stop = undefined;
    await stopping?.();
  };

  beforeEach(async () => {
    receiver = await OtlpReceiver.start();
  });
  afterEach(async () => {
    Reflect.set(Server.prototype, 'emit', nodeEmit);
    trace.disable();
    context.disable();
    propagation.disable();
    await stopped();
    vi.restoreAllMocks();
    await receiver.close();
  });

  it("traces a request sampled by its client: the server span continues the traceparent, under the service's name, and leaves at the stop", async () => {
    start();
    let closed!: Promise<void>;
    let seen: string | undefined;
    const server = await listening((_request, response) => {
      seen = trace.getActiveSpan()?.spanContext().traceId;
      // After the server span's own listener: the span has ended when this runs.
      closed = new Promise((resolve) => response.once('close', resolve));
      response.end();
    });
    const answer = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
    });
    await answer.arrayBuffer();
    await closed;
    await server.close();
    await stopped();

    expect(
      receiver.spans.map(
        ({ name, kind, traceId, parentSpanId, serviceName, scopeName }) => ({
          name,
          kind,
          traceId,
          parentSpanId,
          serviceName,
          scopeName,
        }),
      ),
    ).toEqual([
      {
        name: 'POST',
        // OTLP's numbering, one more than the API's.
        kind: SpanKind.SERVER + 1,
        traceId: TRACE_ID,
        parentSpanId: PARENT_ID,
        serviceName: 'plant-store-unit',
        scopeName: 'plant-store-service',
      },
    ]);
    expect(seen).toBe(TRACE_ID);
  });

  it('reads and writes W3C trace context and baggage', () => {
    start();
    const carrier = {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      baggage: 'tenant=shop',
    };
    const extracted = propagation.extract(ROOT_CONTEXT, carrier);
    expect(trace.getSpanContext(extracted)?.traceId).toBe(TRACE_ID);
    expect(propagation.getBaggage(extracted)?.getEntry('tenant')?.value).toBe(
      'shop',
    );
    const injected: Record<string, string> = {};
    propagation.inject(extracted, injected);
    expect(injected).toEqual(carrier);
  });

  it("keeps every link of a batch span, up to the batcher's 500 rows (the SDK's default keeps 128)", async () => {
    start();
    const links = Array.from({ length: 500 }, (_, row) => ({
      context: {
        traceId: TRACE_ID,
        spanId: row.toString(16).padStart(16, '0'),
        traceFlags: TraceFlags.SAMPLED,
      },
    }));
    trace.getTracer('unit').startSpan(INSERT_BATCH_SPAN, { links }).end();
    await stopped();
    expect(receiver.spans.map((span) => span.links.length)).toEqual([500]);
  });

  it('sends OTLP protobuf when asked, to the endpoint given', async () => {
    start({ protocol: 'http/protobuf' });
    trace.getTracer('unit').startSpan('checked').end();
    // The receiver reads JSON alone: it refuses protobuf, which the stop reports.
    await expect(stopped()).rejects.toThrow('Unsupported Media Type');
    expect(receiver.contentTypes).toEqual(['application/x-protobuf']);
  });

  it('writes the spans to standard output with the console exporter', async () => {
    const printed = vi.spyOn(console, 'dir').mockImplementation(() => {});
    start({ exporter: 'console' });
    trace.getTracer('unit').startSpan('checked').end();
    await stopped();
    expect(printed.mock.calls.map(([span]) => span)).toEqual([
      expect.objectContaining({ name: 'checked' }),
    ]);
    expect(receiver.contentTypes).toEqual([]);
  });

  /** Whether a span of this name, with this parent, is recorded. */
  const recorded = (name: string, parent: Context) => {
    const span = trace.getTracer('unit').startSpan(name, {}, parent);
    const recording = span.isRecording();
    span.end();
    return recording;
  };

  it.each([
    // sampler, ratio: a root, the child of a sampled client span, of an unsampled one
    ['always_on', 1, [true, true, true]],
    ['always_off', 1, [false, false, false]],
    ['traceidratio', 0, [false, false, false]],
    ['traceidratio', 1, [true, true, true]],
    ['parentbased_always_on', 1, [true, true, false]],
    ['parentbased_always_off', 1, [false, true, false]],
    ['parentbased_traceidratio', 0, [false, true, false]],
    ['parentbased_traceidratio', 1, [true, true, false]],
  ] as const)(
    'samples by OTEL_TRACES_SAMPLER=%s (ratio %d), and records every batch span',
    (sampler, samplerRatio, decisions) => {
      start({ sampler, samplerRatio });
      const parents = [
        ROOT_CONTEXT,
        remoteParent(TraceFlags.SAMPLED),
        remoteParent(TraceFlags.NONE),
      ];
      expect(parents.map((parent) => recorded('POST', parent))).toEqual(
        decisions,
      );
      expect(
        parents.map((parent) => recorded(INSERT_BATCH_SPAN, parent)),
      ).toEqual([true, true, true]);
    },
  );

  it('traces a pg statement inside a recorded span, without a span for the connection, and none outside a span', async () => {
    start();
    // Loaded after the SDK, as main.ts orders it: the instrumentation patches it at require.
    const pg = createRequire(import.meta.url)('pg') as {
      Client: typeof Client;
    };
    // A database that hangs up at once: the statement fails, its span ends.
    const database = createTcpServer((socket) => socket.destroy());
    await new Promise<void>((resolve) =>
      database.listen(0, '127.0.0.1', resolve),
    );
    const { port } = database.address() as AddressInfo;
    const select = async () => {
      const client = new pg.Client({ host: '127.0.0.1', port });
      await Promise.allSettled([client.connect(), client.query('SELECT 1')]);
    };
    await select();
    await trace
      .getTracer('unit')
      .startActiveSpan('request', (span) => select().finally(() => span.end()));
    await new Promise((resolve) => database.close(resolve));
    await stopped();

    const request = receiver.spans.find((span) => span.name === 'request');
    expect(
      receiver.spans.map((span) => ({
        parent: span.parentSpanId,
        statement: statementOf(span),
      })),
    ).toEqual(
      expect.arrayContaining([
        { parent: request?.spanId, statement: 'SELECT 1' },
      ]),
    );
    expect(receiver.spans).toHaveLength(2);
  });
});
