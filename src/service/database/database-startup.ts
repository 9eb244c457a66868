import { type BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import {
  forTheService,
  isDatabaseUnavailable,
  type WriteCircuit,
} from '../../lib/index.js';
import { DATABASE_STARTED_MESSAGE } from './database-started-message.js';
import { runMigrations } from './migration-runner.js';

const { listenForBrokenConnections, poolOf } = forTheService;

// A new primary is usually there within seconds: tried again soon, then twice a second.
const RETRY_FIRST_MS = 100;
const RETRY_MOST_MS = 500;
// A migration has no statement timeout: a hung server must not hold the shutdown for ever.
const STOP_WAIT_MS = 2_000;

/** Migrates and connects once the process listens, retrying only while the database is unreachable. */
export class DatabaseStartup implements BeforeApplicationShutdown {
  private readonly logger = new Logger('DatabaseStartup');
  private done = false;
  private readonly stopping = new AbortController();
  /** Resolves once connected (or stopped first); rejects on a failure other than absence. */
  readonly started: Promise<void>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writeCircuit: WriteCircuit,
  ) {
    this.started = this.run();
    // Whoever awaits it sees a failure; nobody awaiting must not make it an unhandled one.
    void this.started.catch(() => undefined);
  }

  /** True once migrated, connected, and probed by the write circuit. */
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
          `${DATABASE_STARTED_MESSAGE} ${Date.now() - since} ms after the start` +
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
