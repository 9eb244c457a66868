import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  type ExportAnswer,
  type ExportRequest,
  type OtlpTarget,
  type SerializedSpans,
  traceSerializerFor,
} from './worker-span-exporter.js';

/** The port's end of the worker: what the service's side asks, each answered with its id. */
export interface ExportPort {
  on(event: 'message', listener: (request: ExportRequest) => void): unknown;
  postMessage(answer: ExportAnswer): void;
}

/** The sending half of an exporter of serialized spans. */
export interface SerializedSpanExporter {
  export(
    spans: SerializedSpans,
    resultCallback: (result: ExportResult) => void,
  ): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * What OpenTelemetry's OTLP/HTTP trace exporters are made of (their `OTLPTraceExporter` is
 * this, with the serializer inside): the same OTEL_EXPORTER_OTLP_* variables, headers,
 * timeout, compression and retries, for a body serialized by WorkerSpanExporter.
 */
export function otlpHttpSender({
  protocol,
  endpoint,
}: OtlpTarget): SerializedSpanExporter {
  const json = protocol === 'http/json';
  const serializer = traceSerializerFor(protocol);
  return new OTLPExporterBase<SerializedSpans>(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({ url: endpoint }, 'TRACES', 'v1/traces', {
        'Content-Type': json ? 'application/json' : 'application/x-protobuf',
      }),
      {
        serializeRequest: ({ body }) => body,
        deserializeResponse: (data) => serializer.deserializeResponse(data),
      },
      'otlp_http_span_exporter',
      { name: 'span', countItems: ({ spanCount }) => spanCount },
      undefined,
    ),
  );
}

const outcome = (work: Promise<void>): Promise<ExportResult> =>
  work.then(
    () => ({ code: ExportResultCode.SUCCESS }),
    (error: unknown) => ({
      code: ExportResultCode.FAILED,
      error: error instanceof Error ? error : new Error(String(error)),
    }),
  );

/** Runs in the export worker: each request handed to `exporter`, its result sent back. */
export function answerSpanExports(
  port: ExportPort,
  exporter: SerializedSpanExporter,
): void {
  port.on('message', (request) => {
    const answer = (result: ExportResult) =>
      port.postMessage({ id: request.id, result });
    switch (request.kind) {
      case 'export':
        exporter.export(request.spans, answer);
        return;
      case 'flush':
        void outcome(exporter.forceFlush()).then(answer);
        return;
      case 'shutdown':
        void outcome(exporter.shutdown()).then(answer);
    }
  });
}
