import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:net';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Pool } from 'pg';
import {
  listenForBrokenConnections,
  poolOf,
  queryWithin,
} from './bounded-query.js';
import { DatabaseDeadlineError, DatabaseDownError } from './database-errors.js';

/** A pooled connection whose query answers with `answer`, recording how it was released. */
function connection(answer: () => Promise<unknown>) {
  const client = Object.assign(new EventEmitter(), {
    query: vi.fn(answer),
    release: vi.fn<(error?: Error) => void>(),
  });
  return client;
}
const poolGiving = (connected: Promise<unknown>) =>
  ({ connect: () => connected }) as unknown as Pool;
const never = () => new Promise<never>(() => {});

/** A statement with 1 s to go, the clock moved past it: it must fail with the deadline. */
async function givenUpAtDeadline(pool: Pool): Promise<void> {
  const answer = queryWithin(pool, Date.now() + 1_000, 'SELECT 1', []);
  const outcome = expect(answer).rejects.toBeInstanceOf(DatabaseDeadlineError);
  await vi.advanceTimersByTimeAsync(1_000);
  await outcome;
}

describe('queryWithin', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] }));
  afterEach(() => vi.useRealTimers());

  it('answers the rows and gives the connection back to the pool', async () => {
    const client = connection(async () => ({ rows: [{ one: 1 }] }));
    await expect(
      queryWithin(
        poolGiving(Promise.resolve(client)),
        Date.now() + 1_000,
        'SELECT 1',
        [],
      ),
    ).resolves.toEqual([{ one: 1 }]);
    expect(client.release).toHaveBeenCalledWith();
  });

  it('gives up on a silent connection at the deadline and discards it', async () => {
    const client = connection(never);
    await givenUpAtDeadline(poolGiving(Promise.resolve(client)));
    expect(client.release).toHaveBeenCalledTimes(1);
    expect(client.release.mock.calls[0]?.[0]).toBeInstanceOf(
      DatabaseDeadlineError,
    );
  });

  it('gives up on a wait for the pool at the deadline; a connection that comes later goes back', async () => {
    let hand: (client: unknown) => void = () => {};
    const client = connection(async () => ({ rows: [] }));
    await givenUpAtDeadline(
      poolGiving(new Promise((resolve) => (hand = resolve))),
    );

    hand(client);
    await vi.advanceTimersByTimeAsync(0);
    expect(client.query).not.toHaveBeenCalled();
    expect(client.release).toHaveBeenCalledWith();
  });

  it.each([
    [
      'discards a connection that failed as unavailable',
      new Error('Connection terminated unexpectedly'),
      true,
    ],
    [
      'keeps a connection that refused a row',
      Object.assign(new Error('value too long'), { code: '22001' }),
      false,
    ],
  ])('%s', async (_case, error, discarded) => {
    const client = connection(() => Promise.reject(error));
    await expect(
      queryWithin(
        poolGiving(Promise.resolve(client)),
        Date.now() + 1_000,
        'x',
        [],
      ),
    ).rejects.toBe(error);
    expect(client.release).toHaveBeenCalledWith(discarded ? error : undefined);
  });

  it('gives up when its signal is aborted, with the reason, and discards the connection', async () => {
    const client = connection(never);
    const aborter = new AbortController();
    const answer = queryWithin(
      poolGiving(Promise.resolve(client)),
      Date.now() + 1_000,
      'SELECT 1',
      [],
      aborter.signal,
    );
    await vi.advanceTimersByTimeAsync(0);
    const reason = new DatabaseDownError();
    aborter.abort(reason);
    await expect(answer).rejects.toBe(reason);
    expect(client.release).toHaveBeenCalledWith(reason);
  });

  it('fails at once, without asking the pool, when its signal is already aborted', async () => {
    const connect = vi.fn(() => never());
    const reason = new DatabaseDownError();
    await expect(
      queryWithin(
        { connect } as unknown as Pool,
        Date.now() + 1_000,
        'SELECT 1',
        [],
        AbortSignal.abort(reason),
      ),
    ).rejects.toBe(reason);
    expect(connect).not.toHaveBeenCalled();
  });

  it('fails at once, without asking the pool, when the deadline has already passed', async () => {
    const connect = vi.fn(() => never());
    const answer = queryWithin(
      { connect } as unknown as Pool,
      Date.now() - 1,
      'SELECT 1',
      [],
    );
    const outcome = expect(answer).rejects.toBeInstanceOf(
      DatabaseDeadlineError,
    );
    await vi.advanceTimersByTimeAsync(0);
    await outcome;
    expect(connect).not.toHaveBeenCalled();
  });
});

describe('poolOf', () => {
  it("is the driver's pool, and DatabaseDownError until the DataSource is initialized", () => {
    const pool = {} as Pool;
    const source = (master: Pool | undefined, isInitialized: boolean) =>
      ({ driver: { master }, isInitialized }) as unknown as DataSource;
    expect(poolOf(source(pool, true))).toBe(pool);
    // A service listening before its database answered (DatabaseStartup): a write is
    // refused as while the database is down, also while initialize() is half done.
    expect(() => poolOf(source(undefined, false))).toThrow(DatabaseDownError);
    expect(() => poolOf(source(pool, false))).toThrow(DatabaseDownError);
  });
});

/** A PostgreSQL message: its type byte, its length, its body. */
function message(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([Buffer.from(type), length, body]);
}

/**
 * A server that accepts a connection's start-up, then ends it in the same write: ready for
 * a query, then FATAL 57P01, as pg_terminate_backend does to a connection while it starts.
 */
function terminatingServer(): Promise<Server> {
  const fatal = Buffer.concat([
    Buffer.from(
      'SFATAL\0C57P01\0Mterminating connection due to administrator command\0\0',
    ),
  ]);
  const server = createServer((socket) => {
    socket.once('data', () => {
      socket.end(
        Buffer.concat([
          message('R', Buffer.from([0, 0, 0, 0])),
          message('Z', Buffer.from('I')),
          message('E', fatal),
        ]),
      );
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(server)),
  );
}

describe('listenForBrokenConnections', () => {
  it('keeps a connection the server ends as it starts from crashing the process: its borrower sees its query fail', async () => {
    const server = await terminatingServer();
    const { port } = server.address() as { port: number };
    const pool = new pg.Pool({
      host: '127.0.0.1',
      port,
      user: 'plants',
      database: 'plants',
    });
    pool.on('error', () => undefined);
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      listenForBrokenConnections(pool);
      listenForBrokenConnections(pool);
      expect(pool.listenerCount('acquire')).toBe(1);
      const client = await pool.connect();
      await expect(client.query('SELECT 1')).rejects.toThrow();
      client.release(true);
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener('uncaughtException', record);
      await pool.end().catch(() => undefined);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
