import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { poolOf, queryWithin } from '../database/bounded-query.js';

// A probe must answer well inside a kubelet's default 1 s probe timeout.
const PING_TIMEOUT_MS = 800;
// The probe is public: however often it is called, the database sees at most about one
// ping per this interval (plus one per timeout while it does not answer).
const RESULT_REUSED_FOR_MS = 1_000;

interface PingResult {
  at: number;
  error?: unknown;
}

/**
 * Whether the database answers, for the readiness probe. Concurrent callers share one
 * ping in flight and a result younger than RESULT_REUSED_FOR_MS is reused, so the public
 * probe cannot be used to load the database. A ping that fails rejects with its database
 * error, which the exception filter answers with 503.
 */
@Injectable()
export class DatabasePing {
  private inFlight: Promise<void> | undefined;
  private last: PingResult | undefined;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  check(): Promise<void> {
    const { last } = this;
    if (last !== undefined && Date.now() - last.at < RESULT_REUSED_FOR_MS) {
      return last.error === undefined
        ? Promise.resolve()
        : Promise.reject(last.error);
    }
    this.inFlight ??= this.ping().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async ping(): Promise<void> {
    try {
      await queryWithin(
        poolOf(this.dataSource),
        Date.now() + PING_TIMEOUT_MS,
        'SELECT 1',
        [],
      );
      this.last = { at: Date.now() };
    } catch (error) {
      this.last = { at: Date.now(), error };
      throw error;
    }
  }
}
