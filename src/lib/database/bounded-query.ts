import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import {
  DatabaseDeadlineError,
  DatabaseDownError,
  isDatabaseUnavailable,
} from './database-errors.js';

/** TypeORM's pg pool, to throw silent connections away; DatabaseDownError before initialization. */
export function poolOf(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as PostgresDriver).master as Pool | undefined;
  if (pool === undefined || !dataSource.isInitialized)
    throw new DatabaseDownError();
  return pool;
}

const listened = new WeakSet<Pool>();
const heard = Symbol('heard');

/** A lasting 'error' listener on every connection: one ended as it starts would be an uncaught exception. */
export function listenForBrokenConnections(pool: Pool): void {
  if (listened.has(pool)) return;
  listened.add(pool);
  pool.on('acquire', keepListening);
}

function keepListening(client: PoolClient & { [heard]?: true }): void {
  if (client[heard]) return;
  client[heard] = true;
  client.on('error', () => undefined);
}

/** Parsed and planned once per connection; `name` must be unique to `text`. */
export interface NamedStatement {
  name: string;
  text: string;
}

/**
 * One statement, pool wait included, over by `deadline` (DatabaseDeadlineError) or `signal`; unlike
 * TypeORM's `query`, a silent or unavailable connection is released with its error, so it closes.
 */
export function queryWithin<Row extends QueryResultRow>(
  pool: Pool,
  deadline: number,
  sql: string | NamedStatement,
  parameters: unknown[],
  signal?: AbortSignal,
): Promise<Row[]> {
  if (deadline <= Date.now())
    return Promise.reject(new DatabaseDeadlineError());
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    let client: PoolClient | undefined;
    let done = false;
    // pg-pool no longer listens to a checked-out client: a break before the query would throw.
    const onBroken = (error: Error) => {
      if (done) return;
      finish((broken) => broken.release(error));
      reject(error);
    };
    const finish = (release: (client: PoolClient) => void) => {
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (client === undefined) return;
      client.removeListener('error', onBroken);
      release(client);
    };
    const timer = setTimeout(
      () => {
        finish((stuck) => stuck.release(new DatabaseDeadlineError()));
        reject(new DatabaseDeadlineError());
      },
      Math.max(0, deadline - Date.now()),
    );
    // As at the deadline: the connection may be stuck, so it is discarded, not reused.
    const onAbort = () => {
      const reason = signal?.reason as Error;
      finish((stuck) => stuck.release(reason));
      reject(reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    pool.connect().then(
      (connected) => {
        // Too late: the caller has its answer; the connection is healthy, so it goes back.
        if (done) return connected.release();
        client = connected;
        connected.on('error', onBroken);
        const answer =
          typeof sql === 'string'
            ? connected.query<Row>(sql, parameters)
            : connected.query<Row>({ ...sql, values: parameters });
        answer.then(
          (result) => {
            if (done) return;
            finish((used) => used.release());
            resolve(result.rows);
          },
          (error: unknown) => {
            if (done) return;
            finish((used) =>
              used.release(
                isDatabaseUnavailable(error) ? (error as Error) : undefined,
              ),
            );
            reject(error);
          },
        );
      },
      (error: unknown) => {
        if (done) return;
        finish(() => {});
        reject(error);
      },
    );
  });
}
