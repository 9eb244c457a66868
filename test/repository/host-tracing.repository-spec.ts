import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { OtlpReceiver, statementOf } from '../support/otlp-receiver.js';
import {
  hostFromGuide,
  INSTALL_TIMEOUT_MS,
  withGuideHost,
} from '../support/packed-package.js';
import { newPlantJson, postPlant, uniqueId } from '../support/plants.js';

const TRACES_SECTION =
  "Traces: your OpenTelemetry SDK sees the package's spans";

/** The guide's host (Nest on Express, TypeORM, pg) and its own OpenTelemetry SDK. */
const HOST_PACKAGES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/typeorm',
  'pg',
  'reflect-metadata',
  'rxjs',
  'typeorm',
  '@opentelemetry/api',
  '@opentelemetry/sdk-node',
  '@opentelemetry/instrumentation-express',
  '@opentelemetry/instrumentation-http',
  '@opentelemetry/instrumentation-nestjs-core',
  '@opentelemetry/instrumentation-pg',
];

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * Another team's application, from the packed tarball, with its own NodeSDK and the usual
 * instrumentations (http, Express, Nest, pg), exporting OTLP to a receiver in the test.
 */
describe("the package's spans in a host's own OpenTelemetry SDK", () => {
  let folder: string;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    folder = await hostFromGuide('plant-store-traced-host-', HOST_PACKAGES, {
      'host.ts': undefined,
      'tracing.ts': TRACES_SECTION,
    });
    receiver = await OtlpReceiver.start();
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(async () => {
    await receiver?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("puts each create in its request's trace, and reaches the statement's span, with its INSERT, through the link", async () => {
    const clients = Array.from({ length: 6 }, () => ({
      traceId: hex(16),
      spanId: hex(8),
    }));
    await withGuideHost(
      folder,
      {
        database: 'traced_host',
        args: ['--import', './out/tracing.js', './out/host.js'],
        env: {
          OTEL_SERVICE_NAME: 'shop',
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_METRICS_EXPORTER: 'none',
          OTEL_LOGS_EXPORTER: 'none',
        },
      },
      async ({ url }) => {
        const answers = await Promise.all(
          clients.map(({ traceId, spanId }) =>
            postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
              headers: { traceparent: `00-${traceId}-${spanId}-01` },
            }),
          ),
        );
        expect(answers.map(({ status }) => status)).toEqual(
          clients.map(() => 200),
        );
      },
    );

    const { spans } = receiver;
    for (const { traceId, spanId } of clients) {
      const inTrace = spans.filter((span) => span.traceId === traceId);
      // The host's HTTP span continues the client's trace; the package's create is inside.
      expect(
        inTrace.find((span) => span.parentSpanId === spanId),
      ).toMatchObject({ serviceName: 'shop' });
      const create = inTrace.find((span) => span.name === 'plants.create');
      expect(create).toBeDefined();
      // No INSERT in the request's own trace: it belongs to the batch.
      expect(
        inTrace.filter((span) => statementOf(span).includes('INSERT')),
      ).toEqual([]);

      expect(create!.links).toHaveLength(1);
      const [link] = create!.links;
      const batch = spans.find(
        (span) => span.spanId === link.spanId && span.traceId === link.traceId,
      );
      expect(batch).toMatchObject({
        name: 'plants.insert_batch',
        parentSpanId: undefined,
        attributes: expect.objectContaining({
          'plants.batch.inserted': expect.any(Number),
        }),
      });
      expect(batch!.links).toContainEqual(
        expect.objectContaining({ traceId, spanId: create!.spanId }),
      );
      const inBatch = spans.filter(
        (span) =>
          span.traceId === batch!.traceId &&
          span.parentSpanId === batch!.spanId,
      );
      expect(
        inBatch.map((span) => `${span.name}: ${statementOf(span)}`),
      ).toContainEqual(expect.stringMatching(/: \s*INSERT INTO/));
    }
  }, 60_000);
});
