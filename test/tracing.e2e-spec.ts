import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { inject } from 'vitest';
import {
  OtlpReceiver,
  type ReceivedSpan,
  statementOf,
} from './support/otlp-receiver.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { ServiceProcess, startReady } from './support/service-process.js';
import { TEST_TOKENS } from './support/tokens.js';

const SERVER = 2;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A client's own trace: the traceparent it sends (W3C Trace Context, sampled). */
function clientTrace() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function startTracedService(
  receiver: OtlpReceiver,
  settings: Record<string, string> = {},
): Promise<{ service: ServiceProcess; baseUrl: string }> {
  const { service, url } = await startReady(inject('databaseUrl'), {
    OTEL_SERVICE_NAME: 'plant-store-e2e',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    ...settings,
  });
  return { service, baseUrl: url };
}

/** The JSON lines the service wrote for a request id. */
function logLinesOf(output: string, requestId: string) {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter(
      (line) => (line.req as { id?: string } | undefined)?.id === requestId,
    );
}

describe('tracing the built service by configuration (OTEL_* variables)', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await OtlpReceiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it("continues each client's trace, links a batch span to every create it served, and logs the trace id", async () => {
    const { service, baseUrl } = await startTracedService(receiver);
    const creates = Array.from({ length: 8 }, () => ({
      ...clientTrace(),
      requestId: `tracing-${hex(6)}`,
      id: uniqueId(),
    }));
    const answers = await Promise.all(
      creates.map(({ traceparent, requestId, id }) =>
        postPlant(baseUrl, newPlantJson(id, 'Fern'), {
          headers: { traceparent, 'X-Request-Id': requestId },
        }),
      ),
    );
    expect(answers.map(({ status }) => status)).toEqual(creates.map(() => 200));
    // A shutdown flushes what was recorded before the process exits.
    expect(await service.stop('SIGTERM')).toBe(0);

    const { spans } = receiver;
    const batches = spans.filter((span) => span.name === 'plants.insert_batch');
    expect(batches.length).toBeGreaterThan(0);
    // In the creates' and the batches' traces, the request's spans, the package's and
    // statements: taking a pooled connection is none.
    const traces = new Set([
      ...creates.map(({ traceId }) => traceId),
      ...batches.map(({ traceId }) => traceId),
    ]);
    expect(
      spans.filter(
        (span) =>
          traces.has(span.traceId) &&
          !['POST /plants', 'plants.create', 'plants.insert_batch'].includes(
            span.name,
          ) &&
          statementOf(span) === '',
      ),
    ).toEqual([]);
    const servedBy = new Map<string, ReceivedSpan>();
    for (const batch of batches) {
      // Every create a batch served is linked: as many links as rows.
      expect(batch.links).toHaveLength(
        batch.attributes['plants.batch.size'] as number,
      );
      expect(batch.parentSpanId).toBeUndefined();
      for (const link of batch.links) servedBy.set(link.spanId, batch);
    }

    for (const { traceId, spanId, requestId } of creates) {
      const inTrace = spans.filter((span) => span.traceId === traceId);
      const server = inTrace.find((span) => span.kind === SERVER);
      expect(server).toMatchObject({
        parentSpanId: spanId,
        name: 'POST /plants',
        serviceName: 'plant-store-e2e',
        attributes: expect.objectContaining({
          'http.route': '/plants',
          'http.request.method': 'POST',
          'http.response.status_code': 200,
        }),
      });
      const create = inTrace.find((span) => span.name === 'plants.create');
      expect(create).toMatchObject({
        attributes: { 'plants.create.outcome': 'created' },
      });
      // The create's trace reaches its statement through the links, both ways.
      const batch = servedBy.get(create!.spanId);
      expect(batch).toBeDefined();
      expect(create!.links).toEqual([
        expect.objectContaining({
          traceId: batch!.traceId,
          spanId: batch!.spanId,
        }),
      ]);
      // The INSERT itself (instrumentation-pg) is inside the batch's trace, not the request's.
      expect(
        spans
          .filter(
            (span) =>
              span.parentSpanId === batch!.spanId &&
              span.traceId === batch!.traceId,
          )
          .map(statementOf),
      ).toContainEqual(expect.stringMatching(/^\s*INSERT INTO/));
      expect(
        inTrace.filter((span) => statementOf(span).includes('INSERT')),
      ).toEqual([]);

      const [line] = logLinesOf(service.text, requestId);
      expect(line).toMatchObject({
        trace_id: traceId,
        span_id: server!.spanId,
      });
    }
  });

  it("exports from the test kit's service too: the bundle, whose export worker stands beside its chunks", async () => {
    const { startPlantStore } = (await import(
      resolve('dist/service/testing/index.js')
    )) as typeof import('../src/service/testing/index.js');
    const store = await startPlantStore({
      env: {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      },
    });
    const { traceId, traceparent } = clientTrace();
    try {
      const answer = await postPlant(
        store.url,
        newPlantJson(uniqueId(), 'Fern'),
        {
          token: store.token,
          headers: { traceparent },
        },
      );
      expect(answer.status).toBe(200);
    } finally {
      await store.stop();
    }
    expect(
      receiver.spans
        .filter((span) => span.traceId === traceId)
        .map(({ name }) => name)
        .sort(),
    ).toEqual(['POST /plants', 'plants.create']);
  });

  it('records a refused token as its 401, without the token, and makes no create span', async () => {
    const { service, baseUrl } = await startTracedService(receiver);
    const client = clientTrace();
    const token = `not-a-token-${hex(12)}`;
    const answer = await postPlant(baseUrl, newPlantJson(uniqueId(), 'Fern'), {
      token,
      headers: { traceparent: client.traceparent },
    });
    expect(answer.status).toBe(401);
    expect(await service.stop('SIGTERM')).toBe(0);

    const inTrace = receiver.spans.filter(
      (span) => span.traceId === client.traceId,
    );
    expect(
      inTrace.map(({ kind, name, parentSpanId, attributes }) => ({
        kind,
        name,
        parentSpanId,
        status: attributes['http.response.status_code'],
      })),
    ).toEqual([
      {
        kind: SERVER,
        name: 'POST /plants',
        parentSpanId: client.spanId,
        status: 401,
      },
    ]);
    expect(receiver.bodies.join('\n')).not.toContain(token);
  });

  it("samples once, at the request: a request not sampled makes no span at all, and a sampled create's batch is recorded whatever the ratio", async () => {
    const { service, baseUrl } = await startTracedService(receiver, {
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const sampled = clientTrace();
    const unsampled = clientTrace();
    const requests = [
      { traceparent: sampled.traceparent, requestId: `sampled-${hex(6)}` },
      {
        traceparent: unsampled.traceparent.replace(/-01$/, '-00'),
        requestId: `unsampled-${hex(6)}`,
      },
      { traceparent: undefined, requestId: `no-parent-${hex(6)}` },
    ];
    for (const { traceparent, requestId } of requests) {
      const answer = await postPlant(
        baseUrl,
        newPlantJson(uniqueId(), 'Fern'),
        {
          headers: {
            'X-Request-Id': requestId,
            ...(traceparent === undefined ? {} : { traceparent }),
          },
        },
      );
      expect(answer.status).toBe(200);
    }
    expect(await service.stop('SIGTERM')).toBe(0);

    const { spans } = receiver;
    const create = spans.find(
      (span) =>
        span.name === 'plants.create' && span.traceId === sampled.traceId,
    );
    expect(create).toBeDefined();
    const batch = spans.find((span) => span.name === 'plants.insert_batch');
    expect(batch?.links).toEqual([
      expect.objectContaining({
        traceId: sampled.traceId,
        spanId: create!.spanId,
      }),
    ]);
    // Every span is the sampled request's, its batch's, or its batch's INSERT.
    expect(
      spans.filter(
        (span) =>
          span.traceId !== sampled.traceId && span.traceId !== batch!.traceId,
      ),
    ).toEqual([]);
    const [sampledLine] = logLinesOf(service.text, requests[0].requestId);
    expect(sampledLine).toMatchObject({ trace_id: sampled.traceId });
    for (const { requestId } of requests.slice(1)) {
      const [line] = logLinesOf(service.text, requestId);
      expect(line).toBeDefined();
      expect(line).not.toHaveProperty('trace_id');
    }
  });

  it.each([
    [
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      'must be one of http/protobuf, http/json',
    ],
    [
      'OTEL_TRACES_SAMPLER_ARG',
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '5' },
      'must be a number from 0 to 1',
    ],
    [
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'must be an http:// or https:// URL',
    ],
  ])(
    'stops the start naming %s when it is invalid',
    async (name, env, rule) => {
      const service = ServiceProcess.start({
        DATABASE_URL: inject('databaseUrl'),
        API_TOKENS: TEST_TOKENS.join(','),
        OTEL_TRACES_EXPORTER: 'otlp',
        ...env,
      });
      expect(await service.exitCode()).toBe(1);
      expect(service.text).toContain(`Invalid configuration: ${name} ${rule}`);
    },
  );
});
