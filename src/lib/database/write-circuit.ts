import { type BeforeApplicationShutdown, Logger } from '@nestjs/common';
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
  /**
   * Longest a commit probe may take: past it the database counts as not committing. As
   * long as a create may wait (DATABASE_REQUEST_TIMEOUT_MS's default), so that a database
   * merely slow is not declared down while creates would still succeed.
   */
  probeTimeoutMs: number;
  /**
   * Longest readiness waits for the probe: then 503, the database not declared down for
   * that. Well inside a kubelet's default 1 s probe timeout.
   */
  readinessTimeoutMs: number;
  /** While the database is down, the pause after a probe that failed before the next. */
  retryEveryMs: number;
  /**
   * Readiness reuses a result this young: the probe is public, so however often it is
   * called the database sees about one probe per this interval.
   */
  reuseForMs: number;
}

export const WRITE_CIRCUIT_DEFAULTS: WriteCircuitOptions = {
  probeTimeoutMs: 2_000,
  readinessTimeoutMs: 800,
  retryEveryMs: 100,
  reuseForMs: 1_000,
};

// A commit that writes WAL (the migration says why a table): on a primary in synchronous
// mode it returns only once a standby has it, exactly as a create's insert does.
const commitProbe = (table: string) => `
  INSERT INTO ${table} (id, checked_at) VALUES (1, now())
  ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`;

interface ProbeResult {
  at: number;
  error?: unknown;
}

/**
 * The write circuit (a circuit breaker in front of every write, not a health probe: the
 * probes are the service's HealthController, which asks it): whether the database can
 * commit now, the one place that knows. Writes go through
 * `write`, which learns from their failures; a database found unable to answer is "down":
 * writes are then refused at once (DatabaseDownError, a 503 naming the database) instead
 * of each waiting out DATABASE_REQUEST_TIMEOUT_MS, writes still waiting are released, and
 * a commit probe runs until one commits, at which moment writes are let through again.
 * A probe that is kept waiting (a primary holding commits for a synchronous standby)
 * returns the moment commits flow, so creates resume with it. Readiness asks `check`: the
 * same commit, not a SELECT 1, which a primary answers while it cannot commit.
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

  /**
   * Runs a write, with a signal aborted should the database be found down meanwhile;
   * refused at once (DatabaseDownError) while it is down. A lost connection may be one
   * ended backend or a whole server gone, and a write past its deadline may have met a
   * database that cannot commit or a process too busy to read the answer in time (under
   * overload, the main thread is the limit): a probe tells which. Any other failure to
   * answer (a refused connection, a server shutting down) means the database is down.
   */
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

  /**
   * For readiness: resolves when the database commits, rejects with its error when not,
   * or with DatabaseDeadlineError past readinessTimeoutMs (the probe goes on). Concurrent
   * callers share one probe and a result younger than reuseForMs is reused; while down,
   * the answer is at once (the probes run anyway).
   */
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

  /**
   * Learns now whether the database commits (one commit probe, shared with any that runs)
   * and resolves once the circuit says so, either way. For whoever opens the pool late (the
   * service's DatabaseStartup): writes that met it closed called the database down, and
   * without this the circuit would still say so until its next probe, after readiness.
   */
  refresh(): Promise<void> {
    return this.probe().catch(() => undefined);
  }

  beforeApplicationShutdown(): void {
    this.closed = true;
  }

  /** One commit, shared by whoever asks while it runs; its outcome decides up or down. */
  private probe(): Promise<void> {
    this.inFlight ??= this.commit().finally(() => {
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
