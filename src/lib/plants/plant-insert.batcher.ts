import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  DatabaseDeadlineError,
  isCausedByOneRow,
} from '../database/database-errors.js';
import type { CreateTracing } from './create-tracing.js';
import { InsertBatchTracing } from './insert-batch-tracing.js';
import {
  InsertClientGoneError,
  InsertQueueFullError,
} from './insert-refusals.js';

export interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

/** created: this row was written; taken: the id already held a row (read it to compare). */
export type InsertOutcome = 'created' | 'taken';

/** One multi-row INSERT ... ON CONFLICT DO NOTHING, over by `deadline`: the ids it wrote. */
export type InsertRows = (
  rows: PlantRow[],
  deadline: number,
) => Promise<Set<string>>;

export interface InsertRequest {
  row: PlantRow;
  /** Epoch ms by which the caller must have its outcome. */
  deadline: number;
  /** True once the client has gone: a row still queued then is never written. */
  clientGone?: () => boolean;
  /** The create's span, while an SDK is registered: its statement's span links to it. */
  tracing?: CreateTracing;
}

/** How much waiting the batcher accepts before it sheds new inserts (503). */
export interface InsertQueueLimits {
  maxRows: number;
  maxWaitMs: number;
}

interface Pending extends InsertRequest {
  queuedAt: number;
  /** Epoch ms; a row not sent by then is answered 503 instead. */
  sendBy: number;
  resolve: (outcome: InsertOutcome) => void;
  reject: (error: unknown) => void;
}

// Enough statements to keep the pool busy, few enough that arrivals share the next one.
const MAX_BATCHES_IN_FLIGHT = 4;
const MAX_BATCH_ROWS = 500;
// With no statement in flight, this many go at once (docs/performance.md#grouped-inserts).
const EARLY_BATCH_ROWS = 32;

const byIdThenArrival = (batch: Pending[]): Pending[] => {
  const keyed = batch.map((pending) => ({
    pending,
    id: BigInt(pending.row.id),
  }));
  // Array.prototype.sort is stable: among equal ids, the first arrival stays first.
  keyed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return keyed.map(({ pending }) => pending);
};

/**
 * One multi-row INSERT per turn of the event loop for concurrent creates, each learning its own
 * outcome (docs/performance.md#grouped-inserts); rows in id order, so statements cannot deadlock.
 */
export class PlantInsertBatcher {
  private queue: Pending[] = [];
  private flushScheduled = false;
  private inFlight = 0;
  private expiry: NodeJS.Timeout | undefined;
  private lastAnswerAt = 0;

  constructor(
    private readonly insertRows: InsertRows,
    private readonly limits: InsertQueueLimits,
  ) {}

  insert(request: InsertRequest): Promise<InsertOutcome> {
    if (this.queue.length >= this.limits.maxRows)
      return Promise.reject(new InsertQueueFullError());
    return new Promise((resolve, reject) => {
      const queuedAt = Date.now();
      const sendBy = Math.min(
        queuedAt + this.limits.maxWaitMs,
        request.deadline,
      );
      this.queue.push({ ...request, queuedAt, sendBy, resolve, reject });
      this.scheduleFlush();
    });
  }

  get statementsInFlight(): number {
    return this.inFlight;
  }

  get rowsWaiting(): number {
    return this.queue.length;
  }

  /** Whether a new insert would be shed now: lets a caller refuse before doing any work. */
  get isOverloaded(): boolean {
    const oldest = this.queue[0];
    return (
      this.queue.length >= this.limits.maxRows ||
      (oldest !== undefined && oldest.sendBy <= Date.now())
    );
  }

  private scheduleFlush(): void {
    if (this.inFlight === 0 && this.queue.length >= EARLY_BATCH_ROWS) {
      this.flush();
      return;
    }
    if (this.flushScheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT) {
      this.scheduleExpiry();
      return;
    }
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /**
   * In no request's trace context: called in the turn of whichever create set it going, its
   * statements, and the flushes their answers schedule, would all run in that request's
   * context, and a host's pg instrumentation would record every later statement in its trace.
   */
  private flush(): void {
    context.with(ROOT_CONTEXT, () => this.sendWaiting());
  }

  private sendWaiting(): void {
    this.dropUnwanted();
    while (this.queue.length > 0 && this.inFlight < MAX_BATCHES_IN_FLIGHT) {
      const batch = this.queue.splice(0, MAX_BATCH_ROWS);
      this.inFlight += 1;
      void this.run(byIdThenArrival(batch)).finally(() => {
        this.inFlight -= 1;
        this.lastAnswerAt = Date.now();
        if (this.queue.length > 0) this.scheduleFlush();
      });
    }
    this.scheduleExpiry();
  }

  /** Drops rows whose client left or that waited too long; no answer at all meant the database. */
  private dropUnwanted(): void {
    const now = Date.now();
    const kept: Pending[] = [];
    for (const pending of this.queue) {
      if (pending.clientGone?.() === true)
        pending.reject(new InsertClientGoneError());
      else if (pending.sendBy <= now)
        pending.reject(
          this.lastAnswerAt < pending.queuedAt
            ? new DatabaseDeadlineError()
            : new InsertQueueFullError(),
        );
      else kept.push(pending);
    }
    this.queue = kept;
  }

  // While every slot is busy nothing flushes, so one timer answers what waited too long.
  private scheduleExpiry(): void {
    if (this.expiry !== undefined || this.queue.length === 0) return;
    const first = this.queue.reduce(
      (earliest, pending) => Math.min(earliest, pending.sendBy),
      Infinity,
    );
    this.expiry = setTimeout(
      () => {
        this.expiry = undefined;
        this.dropUnwanted();
        this.scheduleExpiry();
      },
      Math.max(0, first - Date.now()),
    );
  }

  private async run(batch: Pending[]): Promise<void> {
    const deadline = Math.min(...batch.map((pending) => pending.deadline));
    const tracing = InsertBatchTracing.start(batch);
    try {
      const rows = batch.map(({ row }) => row);
      const inserted = await (tracing === undefined
        ? this.insertRows(rows, deadline)
        : tracing.around(() => this.insertRows(rows, deadline)));
      const written = inserted.size;
      for (const pending of batch) {
        // The first of several rows with one id is the one written.
        const created = inserted.delete(pending.row.id);
        if (!created) tracing?.owes(pending.tracing);
        pending.resolve(created ? 'created' : 'taken');
      }
      tracing?.answered(written);
    } catch (error) {
      tracing?.failed(error);
      if (batch.length === 1 || !isCausedByOneRow(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // One bad row fails the statement: halve until it is alone, one half at a time.
      const half = Math.ceil(batch.length / 2);
      await this.run(batch.slice(0, half));
      await this.run(batch.slice(half));
    }
  }
}
