import { Worker } from 'node:worker_threads';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpProtocol } from '../config/tracing-settings.js';

/** A batch as OTLP sends it: the request's body, and how many spans it holds. */
export interface SerializedSpans {
  body: Uint8Array;
  spanCount: number;
}

/** What the exporter asks of its worker (answer-span-exports.ts). */
type ExportQuestion =
  | { kind: 'export'; spans: SerializedSpans }
  | { kind: 'flush' }
  | { kind: 'shutdown' };

/** A question with the id its answer comes back with. */
export type ExportRequest = { id: number } & ExportQuestion;

export interface ExportAnswer {
  id: number;
  result: ExportResult;
}

/** The worker as the exporter uses it: a `Worker`, or a port in a spec. */
export interface ExportWorker {
  postMessage(request: ExportRequest, transfer?: ArrayBuffer[]): void;
  on(event: 'message', listener: (answer: ExportAnswer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  ref(): void;
  unref(): void;
  terminate(): Promise<unknown>;
}

/** OpenTelemetry's own serializer of trace requests for `protocol`. */
export function traceSerializerFor(protocol: OtlpProtocol) {
  return protocol === 'http/json'
    ? JsonTraceSerializer
    : ProtobufTraceSerializer;
}

export interface OtlpTarget {
  protocol: OtlpProtocol;
  endpoint: string;
}

/** The worker of span-export-worker.ts, beside this file in dist/service and in the bundle. */
export function otlpExportWorker(target: OtlpTarget): ExportWorker {
  return new Worker(new URL('./span-export-worker.js', import.meta.url), {
    workerData: target,
  }) as ExportWorker;
}

/**
 * An OTLP exporter in two halves: the batch is serialized here, as OpenTelemetry's exporter
 * does it, and sent from a worker thread. In the service's own isolate the exporter's HTTP
 * client made Node's HTTP and stream functions, which every create runs, see its objects
 * too and run slower (docs/operations.md#what-tracing-costs). The worker starts with the
 * exporter, so its start is paid with the service's, not by the first export.
 */
export class WorkerSpanExporter implements SpanExporter {
  private worker: ExportWorker | undefined;
  private readonly waiting = new Map<number, (result: ExportResult) => void>();
  private lastId = 0;
  private readonly serializer;

  constructor(
    protocol: OtlpProtocol,
    private readonly startWorker: () => ExportWorker,
  ) {
    this.serializer = traceSerializerFor(protocol);
    this.worker = this.started();
  }

  export(
    spans: ReadableSpan[],
    resultCallback: (result: ExportResult) => void,
  ): void {
    const body = this.serializer.serializeRequest(spans);
    if (body === undefined) {
      resultCallback({
        code: ExportResultCode.FAILED,
        error: new Error('the spans could not be serialized'),
      });
      return;
    }
    // Transferred below: a view on a larger buffer (a pooled Buffer cannot be) is copied first.
    const own =
      body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
    this.ask(
      { kind: 'export', spans: { body: own, spanCount: spans.length } },
      resultCallback,
    );
  }

  async forceFlush(): Promise<void> {
    if (this.worker !== undefined) await this.asked({ kind: 'flush' });
  }

  async shutdown(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    try {
      await this.asked({ kind: 'shutdown' });
    } finally {
      this.worker = undefined;
      await worker.terminate();
    }
  }

  private asked(
    request: Exclude<ExportQuestion, { kind: 'export' }>,
  ): Promise<void> {
    return new Promise((resolve, reject) =>
      this.ask(request, ({ code, error }) =>
        code === ExportResultCode.SUCCESS ? resolve() : reject(error),
      ),
    );
  }

  private ask(
    request: ExportQuestion,
    answered: (result: ExportResult) => void,
  ): void {
    const worker = (this.worker ??= this.started());
    const id = (this.lastId += 1);
    this.waiting.set(id, answered);
    // Idle, the worker lets the process exit; an export in flight holds it, as a socket would.
    if (this.waiting.size === 1) worker.ref();
    // The body's memory moves to the worker rather than being copied.
    const transfer =
      request.kind === 'export'
        ? [request.spans.body.buffer as ArrayBuffer]
        : [];
    worker.postMessage({ ...request, id }, transfer);
  }

  private started(): ExportWorker {
    const worker = this.startWorker();
    worker.unref();
    worker.on('message', ({ id, result }) => this.answer(id, result));
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const id of this.waiting.keys())
        this.answer(id, { code: ExportResultCode.FAILED, error });
    };
    worker.on('error', lost);
    worker.on('exit', (code) =>
      lost(new Error(`the span export worker exited with code ${code}`)),
    );
    return worker;
  }

  private answer(id: number, result: ExportResult): void {
    const answered = this.waiting.get(id);
    if (answered === undefined) return;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker?.unref();
    answered(result);
  }
}
