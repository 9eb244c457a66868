import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import {
  DatabaseDeadlineError,
  DatabaseDownError,
  isDatabaseUnavailable,
} from './database-errors.js';

/**
 * TypeORM's pg pool: reached directly so that a silent connection can be thrown away.
 * DatabaseDownError until the DataSource is initialized (a service that started listening
 * before its database answered; its pool exists a moment before its entity metadata): a
 * write is then refused as while the database is down.
 */
export function poolOf(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as PostgresDriver).master as Pool | undefined;
  if (pool === undefined || !dataSource.isInitialized)
    throw new DatabaseDownError();
  return pool;
}

const listened = new WeakSet<Pool>();
const heard = Symbol('heard');

/**
 * From now on, each connection `pool` hands out keeps an 'error' listener for good (once per
 * pool, however often it is called): pg-pool takes its own off as it hands one out, and a
 * connection the server ends in the same read as its first ReadyForQuery
 * (pg_terminate_backend while it starts) would emit 'error' before its borrower could
 * listen, which Node makes an uncaught exception. The borrower learns of the loss from its
 * query, which fails. Call it as soon as the DataSource is initialized.
 */
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

/**
 * A statement PostgreSQL parses and plans once per connection, then runs by its name: `name`
 * must be unique to `text` (pg refuses one name for two texts on a connection).
 */
export interface NamedStatement {
  name: string;
  text: string;
}

/**
 * One statement whose whole database part (the wait for a pooled connection and the query)
 * ends by `deadline` (epoch ms), with DatabaseDeadlineError if the database is silent, or
 * earlier when `signal` is aborted (with its reason): the caller learned meanwhile that the
 * database cannot answer.
 *
 * Why not TypeORM's `query`: connect and statement timeouts do not cover a connection that
 * is open but silent (a hung server), and TypeORM would give such a connection back to the
 * pool, where the next query queues behind the stuck one. Here a connection that outlived
 * the deadline, or failed as unavailable, is released with its error, which makes pg-pool
 * close it and open a fresh one when needed.
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
    // pg-pool listens for a checked-out client's errors no more: without this, a connection
    // that breaks between the checkout and the query would be an uncaught 'error' event.
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
