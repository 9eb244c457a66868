import { type BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import {
  forTheService,
  isDatabaseUnavailable,
  type WriteCircuit,
} from '../../lib/index.js';
import { runMigrations } from './migration-runner.js';

const { listenForBrokenConnections, poolOf } = forTheService;

// A new primary is usually there within seconds: tried again soon, then twice a second.
const RETRY_FIRST_MS = 100;
const RETRY_MOST_MS = 500;
// A migration has no statement timeout: a hung server must not hold the shutdown for ever.
const STOP_WAIT_MS = 2_000;

/**
 * Migrates and connects the service's DataSource after the process has started listening,
 * trying again for as long as the database cannot be reached (issue 42): a replica started
 * during a failover comes up, answers its probes and its own 503s, and creates as soon as
 * the database commits again, instead of exiting after a few refused connections. Until
 * then it is "starting": not ready (HealthController). Once connected, it is started when
 * the write circuit knows whether the database commits: creates that met the pool closed
 * called the database down, and a replica must not turn ready while its circuit still
 * says so. Any other failure (a refused password, a migration that fails) ends `started`
 * with that error, and the start fails.
 */
export class DatabaseStartup implements BeforeApplicationShutdown {
  private readonly logger = new Logger('DatabaseStartup');
  private done = false;
  private readonly stopping = new AbortController();
  /**
   * Resolves once migrated and connected, or stopped (at shutdown) before that; rejects on
   * a failure that is not the database's absence.
   */
  readonly started: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writeCircuit: WriteCircuit,
  ) {
    this.started = this.run();
    // Whoever awaits it sees a failure; nobody awaiting must not make it an unhandled one.
    void this.started.catch(() => undefined);
  }

  /**
   * True once the schema is up to date, the pool is open and the write circuit has probed
   * it.
   */
  get isStarted(): boolean {
    return this.done;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    await Promise.race([
      this.started.catch(() => undefined),
      sleep(STOP_WAIT_MS, undefined, { ref: false }),
    ]);
  }

  private async run(): Promise<void> {
    const options = this.dataSource.options as PostgresDataSourceOptions;
    const since = Date.now();
    let pauseMs = RETRY_FIRST_MS;
    let failures = 0;
    for (;;) {
      try {
        await runMigrations(options);
        await this.dataSource.initialize();
        listenForBrokenConnections(poolOf(this.dataSource));
        await this.writeCircuit.refresh();
        this.done = true;
        this.logger.log(
          `Database migrated and connected ${Date.now() - since} ms after the start` +
            (failures > 0
              ? `, after ${failures} attempt(s) the database could not answer`
              : ''),
        );
        return;
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        if (!isDatabaseUnavailable(error)) throw error;
        failures += 1;
        if (failures === 1)
          this.logger.warn(
            `The database cannot be reached (${error instanceof Error ? error.message : String(error)}): ` +
              'not ready, creates answered 503, trying again until it answers',
          );
      }
      try {
        await sleep(pauseMs, undefined, { signal: this.stopping.signal });
      } catch {
        return;
      }
      pauseMs = Math.min(pauseMs * 2, RETRY_MOST_MS);
    }
  }
}
