import { EventEmitter } from 'node:events';
import type { Pool } from 'pg';
import { queryWithin } from './bounded-query.js';
import { DatabaseDeadlineError } from './database-errors.js';

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
    const answer = queryWithin(
      poolGiving(Promise.resolve(client)),
      Date.now() + 1_000,
      'SELECT 1',
      [],
    );
    const outcome = expect(answer).rejects.toBeInstanceOf(
      DatabaseDeadlineError,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    await outcome;
    expect(client.release).toHaveBeenCalledTimes(1);
    expect(client.release.mock.calls[0]?.[0]).toBeInstanceOf(
      DatabaseDeadlineError,
    );
  });

  it('gives up on a wait for the pool at the deadline; a connection that comes later goes back', async () => {
    let hand: (client: unknown) => void = () => {};
    const client = connection(async () => ({ rows: [] }));
    const answer = queryWithin(
      poolGiving(new Promise((resolve) => (hand = resolve))),
      Date.now() + 1_000,
      'SELECT 1',
      [],
    );
    const outcome = expect(answer).rejects.toBeInstanceOf(
      DatabaseDeadlineError,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    await outcome;

    hand(client);
    await vi.advanceTimersByTimeAsync(0);
    expect(client.query).not.toHaveBeenCalled();
    expect(client.release).toHaveBeenCalledWith();
  });

  it('discards a connection that failed as unavailable, keeps one that refused a row', async () => {
    const lost = new Error('Connection terminated unexpectedly');
    const broken = connection(() => Promise.reject(lost));
    await expect(
      queryWithin(
        poolGiving(Promise.resolve(broken)),
        Date.now() + 1_000,
        'x',
        [],
      ),
    ).rejects.toBe(lost);
    expect(broken.release).toHaveBeenCalledWith(lost);

    const tooLong = Object.assign(new Error('value too long'), {
      code: '22001',
    });
    const healthy = connection(() => Promise.reject(tooLong));
    await expect(
      queryWithin(
        poolGiving(Promise.resolve(healthy)),
        Date.now() + 1_000,
        'x',
        [],
      ),
    ).rejects.toBe(tooLong);
    expect(healthy.release).toHaveBeenCalledWith(undefined);
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
