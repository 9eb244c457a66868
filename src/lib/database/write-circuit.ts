import { type BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Pool } from 'pg';
import { queryWithin } from './bounded-query.js';
import {
  DatabaseDeadlineError,
  DatabaseDownError,
  isDatabaseUnavailable,
  isLostConnection,
  retryingLostConnection,
} from './database-errors.js';

export interface WriteCircuitOptions {
  /** Longest a commit probe may take; as long as a create may wait, so slow is not down. */
  probeTimeoutMs: number;
  /** Longest readiness waits for the probe (then 503), inside a kubelet's 1 s timeout. */
  readinessTimeoutMs: number;
  /** While the database is down, the pause after a probe that failed before the next. */
  retryEveryMs: number;
  /** Readiness reuses a result this young: about one probe per interval however often asked. */
  reuseForMs: number;
}

export const WRITE_CIRCUIT_DEFAULTS: WriteCircuitOptions = {
  probeTimeoutMs: 2_000,
  readinessTimeoutMs: 800,
  retryEveryMs: 100,
  reuseForMs: 1_000,
};

// A commit that writes WAL: a synchronous primary returns only once a standby has it.
const commitProbe = (table: string) => `
  INSERT INTO ${table} (id, checked_at) VALUES (1, now())
  ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`;

interface ProbeResult {
  at: number;
  error?: unknown;
}

/**
 * Whether the database can commit now: while down, writes are refused at once and a probe commits
 * until one succeeds. Readiness asks `check`: a commit, not a SELECT 1, which answers while commits hang.
 */
export class WriteCircuit implements BeforeApplicationShutdown {
  private readonly logger = new Logger('WriteCircuit');
  private down: { since: number } | undefined;
  private last: ProbeResult | undefined;
  private inFlight: Promise<void> | undefined;
  private aborter = new AbortController();
  private closed = false;
  private readonly probeStatement: string;

  /** `probeTable`: the commit_probe table as SQL names it (in the DataSource's schema). */
  constructor(
    private readonly pool: () => Pool,
    private readonly options: WriteCircuitOptions = WRITE_CIRCUIT_DEFAULTS,
    probeTable = 'commit_probe',
  ) {
    this.probeStatement = commitProbe(probeTable);
  }

  /** False while the database is known not to commit: a write would be refused at once. */
  get canCommit(): boolean {
    return this.down === undefined;
  }

  /** `run`, aborted if the database is found down; a lost connection or a deadline only starts a probe. */
  async write<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.down !== undefined) throw new DatabaseDownError();
    try {
      return await run(this.aborter.signal);
    } catch (error) {
      if (isLostConnection(error) || error instanceof DatabaseDeadlineError)
        void this.probe().catch(() => undefined);
      else if (isDatabaseUnavailable(error)) this.markDown();
      throw error;
    }
  }

  /** For readiness: the probe's outcome, shared and reused for reuseForMs; past readinessTimeoutMs, a deadline error. */
  check(): Promise<void> {
    if (this.down !== undefined)
      return Promise.reject(this.last?.error ?? new DatabaseDownError());
    const { last } = this;
    if (last !== undefined && Date.now() - last.at < this.options.reuseForMs)
      return last.error === undefined
        ? Promise.resolve()
        : Promise.reject(last.error);
    const probe = this.probe();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new DatabaseDeadlineError()),
        this.options.readinessTimeoutMs,
      );
      probe.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }

  /** One probe now, for whoever opens the pool late (DatabaseStartup); resolves either way. */
  refresh(): Promise<void> {
    return this.probe().catch(() => undefined);
  }

  beforeApplicationShutdown(): void {
    this.closed = true;
  }

  /**
   * One commit, shared by whoever asks while it runs; its outcome decides up or down. Shared,
   * it is in no request's trace: nor are the probes that follow it while the database is down.
   */
  private probe(): Promise<void> {
    this.inFlight ??= context
      .with(ROOT_CONTEXT, () => this.commit())
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async commit(): Promise<void> {
    const deadline = Date.now() + this.options.probeTimeoutMs;
    try {
      // A pooled connection ended by the server fails at once, as for a create.
      await retryingLostConnection(() =>
        queryWithin(this.pool(), deadline, this.probeStatement, []),
      );
      this.last = { at: Date.now() };
      this.markUp();
    } catch (error) {
      this.last = { at: Date.now(), error };
      if (isDatabaseUnavailable(error)) this.markDown();
      throw error;
    }
  }

  private markDown(): void {
    if (this.down !== undefined || this.closed) return;
    this.down = { since: Date.now() };
    this.logger.warn(
      'The database cannot commit now: creates are refused at once until a commit succeeds.',
    );
    // Writes still waiting learn it now, rather than at their deadline.
    this.aborter.abort(new DatabaseDownError());
    this.aborter = new AbortController();
    void this.probeUntilUp();
  }

  private markUp(): void {
    if (this.down === undefined) return;
    this.logger.log(
      `The database commits again, ${Date.now() - this.down.since} ms after it was found down.`,
    );
    this.down = undefined;
  }

  private async probeUntilUp(): Promise<void> {
    while (this.down !== undefined && !this.closed) {
      const started = Date.now();
      await this.probe().catch(() => undefined);
      const pause = this.options.retryEveryMs - (Date.now() - started);
      if (this.down !== undefined && pause > 0)
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
    }
  }
}
