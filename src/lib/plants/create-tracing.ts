import { context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { errorAnswerOf } from '../errors/error-status.js';
import type { InsertBatchTracing } from './insert-batch-tracing.js';
import {
  CREATE_SPAN,
  CREATE_SPAN_OPTIONS,
  PLANTS_ATTRIBUTES,
  plantsTracer,
} from './plants-tracer.js';

export type CreateOutcome = 'created' | 'replayed' | 'conflict';

/** The `plants.create` span of one create, linked each way with its batch's span. */
export class CreateTracing {
  /** The batch whose statement found this id taken: it waits for the verdict. */
  private verdictOwedTo: InsertBatchTracing | undefined;

  private constructor(readonly span: Span) {}

  /** A span only inside a recorded one: a create joins a trace, never starts one. */
  static start(): CreateTracing | undefined {
    if (trace.getActiveSpan()?.isRecording() !== true) return undefined;
    return new CreateTracing(
      plantsTracer.startSpan(CREATE_SPAN, CREATE_SPAN_OPTIONS),
    );
  }

  /** Runs `work` with this span active, so the create's own queries are its children. */
  around<T>(work: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(context.active(), this.span), work);
  }

  /** Called by the batch that sent this create's row. */
  joined(batch: InsertBatchTracing): void {
    if (this.span.isRecording() && batch.span.isRecording())
      this.span.addLink({ context: batch.span.spanContext() });
  }

  /** The statement found the id taken: the batch counts the verdict once it is known. */
  owesVerdictTo(batch: InsertBatchTracing): void {
    // A retried create (its read lost the connection) owes nothing to the earlier batch.
    this.settle(undefined);
    this.verdictOwedTo = batch;
  }

  /** What the create came to; a taken id's verdict reaches the batch that found it. */
  decided(outcome: CreateOutcome): void {
    this.settle(outcome);
    this.span.setAttribute(PLANTS_ATTRIBUTES.createOutcome, outcome);
  }

  succeeded(): void {
    this.settle(undefined);
    this.span.end();
  }

  /** Recorded with the Error answer's status and sentence, never the error's own text. */
  failed(error: unknown): void {
    this.settle(undefined);
    const { status, message } = errorAnswerOf(error);
    if (status !== 409)
      this.span.setAttribute(PLANTS_ATTRIBUTES.createOutcome, 'failed');
    this.span.setAttribute(PLANTS_ATTRIBUTES.errorType, String(status));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    this.span.end();
  }

  private settle(outcome: CreateOutcome | undefined): void {
    this.verdictOwedTo?.verdict(outcome);
    this.verdictOwedTo = undefined;
  }
}
