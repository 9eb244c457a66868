import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../config/tracing-settings.js';
import { routeServerSpan } from './server-span-route.js';

// A batch span links to every create it served: up to the batcher's 500 rows (the SDK's
// default keeps 128 links).
const LINKS_PER_SPAN = 512;

function samplerFor({ sampler, samplerRatio }: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(samplerRatio);
  switch (sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

function exporterFor({ exporter, protocol, endpoint }: TracingSettings) {
  if (exporter === 'console') return new ConsoleSpanExporter();
  return protocol === 'http/json'
    ? new OtlpJsonExporter({ url: endpoint })
    : new OtlpProtobufExporter({ url: endpoint });
}

/**
 * OpenTelemetry's SDK for the service: W3C trace context in and out, spans batched to the
 * configured exporter, and the instrumentations of Node's HTTP server and client and of pg.
 * Returns the stop that flushes what was recorded.
 */
export function startTracingSdk(
  settings: TracingSettings,
): () => Promise<void> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [
        new W3CTraceContextPropagator(),
        new W3CBaggagePropagator(),
      ],
    }),
  );
  const exporter: SpanExporter = exporterFor(settings);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
    }),
    sampler: samplerFor(settings),
    spanLimits: { linkCountLimit: LINKS_PER_SPAN },
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        // On Express the matched route is on Node's request by the time it is answered.
        applyCustomAttributesOnSpan: (span, request) =>
          routeServerSpan(span, request),
      }),
      new PgInstrumentation(),
    ],
  });
  return () => provider.shutdown();
}
