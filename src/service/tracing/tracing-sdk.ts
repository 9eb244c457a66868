import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  type Sampler,
  SamplingDecision,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { INSERT_BATCH_SPAN } from '../../lib/plants/plants-tracer.js';
import type { TracingSettings } from '../config/tracing-settings.js';
import { traceIncomingRequests } from './server-spans.js';
import {
  type ExportWorker,
  otlpExportWorker,
  type OtlpTarget,
  WorkerSpanExporter,
} from './worker-span-exporter.js';

// A batch span links to every create it served: up to the batcher's 500 rows (the SDK's
// default keeps 128 links).
const LINKS_PER_SPAN = 512;

/** Batch spans only for recorded creates: the ratio would drop most, and links would lead nowhere. */
function withBatchesOfRecordedCreates(sampler: Sampler): Sampler {
  return {
    shouldSample: (...args) =>
      args[2] === INSERT_BATCH_SPAN
        ? { decision: SamplingDecision.RECORD_AND_SAMPLED }
        : sampler.shouldSample(...args),
    toString: () => `WithBatchesOfRecordedCreates{${sampler.toString()}}`,
  };
}

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

function exporterFor(
  { exporter, protocol, endpoint }: TracingSettings,
  startExportWorker: (target: OtlpTarget) => ExportWorker,
) {
  if (exporter === 'console') return new ConsoleSpanExporter();
  return new WorkerSpanExporter(protocol, () =>
    startExportWorker({ protocol, endpoint }),
  );
}

/**
 * The service's SDK: W3C context, server spans, pg's instrumentation, batched export; returns
 * the flushing stop. OTLP is sent from `startExportWorker`'s worker (a spec's runs in-thread:
 * under Vitest there is no built worker file).
 */
export function startTracingSdk(
  settings: TracingSettings,
  startExportWorker: (target: OtlpTarget) => ExportWorker = otlpExportWorker,
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
  const exporter: SpanExporter = exporterFor(settings, startExportWorker);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
    }),
    sampler: withBatchesOfRecordedCreates(samplerFor(settings)),
    spanLimits: { linkCountLimit: LINKS_PER_SPAN },
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  traceIncomingRequests(provider.getTracer('plant-store-service'));
  // Queries traced only inside a recorded span: a create's read, a batch's INSERT. Taking a
  // pooled connection is no statement: no span.
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new PgInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
      }),
    ],
  });
  return () => provider.shutdown();
}
