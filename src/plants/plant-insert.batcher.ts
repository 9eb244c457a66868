import { isLostConnection } from '../database/database-errors.js';

export interface PlantRow {
  id: string;
  name: string;
  tag: string | null;
}

/** created: this row was written; taken: the id already held a row (read it to compare). */
export type InsertOutcome = 'created' | 'taken';

/** One multi-row INSERT ... ON CONFLICT DO NOTHING: resolves to the ids it wrote. */
export type InsertRows = (rows: PlantRow[]) => Promise<Set<string>>;

interface Pending {
  row: PlantRow;
  resolve: (outcome: InsertOutcome) => void;
  reject: (error: unknown) => void;
}

// Enough statements in flight to keep the pool busy, few enough that arrivals queue up
// behind them and share the next statement.
const MAX_BATCHES_IN_FLIGHT = 4;
const MAX_BATCH_ROWS = 500;

/**
 * Groups the inserts of concurrent requests into one multi-row INSERT ... ON CONFLICT DO
 * NOTHING per turn of the event loop; each caller still learns its own outcome. Measured
 * reason: one statement per request made PostgreSQL's per-statement cost, not the service,
 * the limit on this machine (bench/RESULTS.md). A request alone is sent at the next turn
 * of the loop (setImmediate): no timer, no added wait under light load.
 *
 * PlantsRepository's private helper: it owns the statement, this class only the grouping.
 */
export class PlantInsertBatcher {
  private queue: Pending[] = [];
  private flushScheduled = false;
  private inFlight = 0;

  constructor(private readonly insertRows: InsertRows) {}

  insert(row: PlantRow): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < MAX_BATCHES_IN_FLIGHT) {
      const batch = this.queue.splice(0, MAX_BATCH_ROWS);
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        if (this.queue.length > 0) this.scheduleFlush();
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    try {
      const inserted = await this.insertRows(batch.map(({ row }) => row));
      for (const pending of batch) {
        // The first of several rows with one id is the one written.
        const created = inserted.delete(pending.row.id);
        pending.resolve(created ? 'created' : 'taken');
      }
    } catch (error) {
      if (batch.length === 1 || isLostConnection(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // One bad row fails the whole statement: give each row its own, so only it fails.
      await Promise.all(batch.map((pending) => this.run([pending])));
    }
  }
}
