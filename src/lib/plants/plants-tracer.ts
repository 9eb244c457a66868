import { SpanKind, type SpanOptions, trace } from '@opentelemetry/api';

/** The package's one tracer: a proxy that follows an SDK registered later. */
export const plantsTracer = trace.getTracer('plant-store');

export const CREATE_SPAN = 'plants.create';
export const INSERT_BATCH_SPAN = 'plants.insert_batch';

/** The attributes the package writes; none holds a token or any part of a body. */
export const PLANTS_ATTRIBUTES = {
  /** created, replayed, conflict or failed. */
  createOutcome: 'plants.create.outcome',
  batchSize: 'plants.batch.size',
  batchInserted: 'plants.batch.inserted',
  batchReplayed: 'plants.batch.replayed',
  batchConflicts: 'plants.batch.conflicts',
  /** The semantic conventions' error.type: here the Error answer's status. */
  errorType: 'error.type',
} as const;

export const CREATE_SPAN_OPTIONS: SpanOptions = { kind: SpanKind.INTERNAL };
