import {
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { errorAnswerOf } from '../errors/error-status.js';
import type { CreateOutcome, CreateTracing } from './create-tracing.js';
import {
  INSERT_BATCH_SPAN,
  PLANTS_ATTRIBUTES,
  plantsTracer,
} from './plants-tracer.js';

/**
 * The `plants.insert_batch` span of one statement: a root linked to every create it served
 * (as OpenTelemetry's messaging conventions link batches), exported once each taken id is
 * known as a replay or a conflict.
 */
export class InsertBatchTracing {
  private verdictsOwed = 0;
  private answeredAt: number | undefined;
  private replayed = 0;
  private conflicts = 0;

  private constructor(readonly span: Span) {}

  /** Undefined when no create of the batch is traced. */
  static start(
    batch: readonly { tracing?: CreateTracing }[],
  ): InsertBatchTracing | undefined {
    let links: Link[] | undefined;
    for (const { tracing: create } of batch) {
      if (create === undefined) continue;
      links ??= [];
      if (create.span.isRecording())
        links.push({ context: create.span.spanContext() });
    }
    if (links === undefined) return undefined;
    const traced = new InsertBatchTracing(
      plantsTracer.startSpan(INSERT_BATCH_SPAN, {
        kind: SpanKind.INTERNAL,
        root: true,
        links,
        attributes: { [PLANTS_ATTRIBUTES.batchSize]: batch.length },
      }),
    );
    for (const { tracing: create } of batch) create?.joined(traced);
    return traced;
  }

  /** Runs the statement with this span active, in no request's trace. */
  around<T>(statement: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(ROOT_CONTEXT, this.span), statement);
  }

  /** A create whose id the statement found taken: the span waits for its verdict. */
  owes(create: CreateTracing | undefined): void {
    if (create === undefined) return;
    this.verdictsOwed += 1;
    create.owesVerdictTo(this);
  }

  /** The statement's answer, its end; the span is handed on once no verdict is owed. */
  answered(inserted: number): void {
    this.answeredAt = performance.now();
    this.span.setAttribute(PLANTS_ATTRIBUTES.batchInserted, inserted);
    this.endOnceSettled();
  }

  failed(error: unknown): void {
    const { status, message } = errorAnswerOf(error);
    this.span.setAttribute(PLANTS_ATTRIBUTES.errorType, String(status));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    this.span.end();
  }

  /** A taken id's outcome; undefined when the create failed before it knew. */
  verdict(outcome: CreateOutcome | undefined): void {
    if (outcome === 'replayed') this.replayed += 1;
    else if (outcome === 'conflict') this.conflicts += 1;
    this.verdictsOwed -= 1;
    this.endOnceSettled();
  }

  private endOnceSettled(): void {
    if (this.verdictsOwed > 0) return;
    this.span.setAttribute(PLANTS_ATTRIBUTES.batchReplayed, this.replayed);
    this.span.setAttribute(PLANTS_ATTRIBUTES.batchConflicts, this.conflicts);
    this.span.end(this.answeredAt);
  }
}
