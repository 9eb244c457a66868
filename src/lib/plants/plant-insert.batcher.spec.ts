import { DatabaseDeadlineError } from '../database/database-errors.js';
import {
  InsertClientGoneError,
  InsertQueueFullError,
} from './insert-refusals.js';
import {
  type InsertRequest,
  type InsertRows,
  PlantInsertBatcher,
  type PlantRow,
  type InsertQueueLimits,
} from './plant-insert.batcher.js';

const ROOMY: InsertQueueLimits = { maxRows: 100_000, maxWaitMs: 600_000 };
const withCode = (message: string, code: string) =>
  Object.assign(new Error(message), { code });

interface FakeTable {
  batcher: PlantInsertBatcher;
  statements: string[][];
  deadlines: number[];
  /** Most statements that were ever running at once. */
  peakConcurrency: () => number;
}

/**
 * A stand-in for PostgreSQL: a table of ids with ON CONFLICT DO NOTHING semantics; each
 * statement answers on a later turn of the event loop, unless `hold` keeps it waiting.
 */
function fakeTable({
  taken = [],
  fail,
  limits = ROOMY,
  hold,
}: {
  taken?: string[];
  fail?: (ids: string[]) => Error | undefined;
  limits?: InsertQueueLimits;
  hold?: Promise<void>;
} = {}): FakeTable {
  const stored = new Set(taken);
  const statements: string[][] = [];
  const deadlines: number[] = [];
  let running = 0;
  let peak = 0;
  const insertRows = vi.fn<InsertRows>(async (rows, deadline) => {
    const ids = rows.map((row) => row.id);
    statements.push(ids);
    deadlines.push(deadline);
    running += 1;
    peak = Math.max(peak, running);
    try {
      await (hold ?? new Promise((resolve) => setImmediate(resolve)));
      const error = fail?.(ids);
      if (error !== undefined) throw error;
      const inserted = new Set<string>();
      for (const id of ids) {
        if (!stored.has(id)) {
          stored.add(id);
          inserted.add(id);
        }
      }
      return inserted;
    } finally {
      running -= 1;
    }
  });
  return {
    batcher: new PlantInsertBatcher(insertRows, limits),
    statements,
    deadlines,
    peakConcurrency: () => peak,
  };
}

const row = (id: string | number, name = `Plant ${id}`): PlantRow => ({
  id: String(id),
  name,
  tag: null,
});
const request = (
  id: string | number,
  extra: Partial<InsertRequest> = {},
): InsertRequest => ({
  row: row(id),
  deadline: Date.now() + 600_000,
  ...extra,
});
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A table whose statements wait until `release()`. */
function heldTable(limits: InsertQueueLimits = ROOMY) {
  let release = () => {};
  const hold = new Promise<void>((resolve) => (release = resolve));
  return { ...fakeTable({ hold, limits }), release };
}

/** Four statements, one per turn of the loop, so that every slot is busy. */
async function fillSlots(
  batcher: PlantInsertBatcher,
): Promise<Promise<unknown>[]> {
  const inFlight: Promise<unknown>[] = [];
  for (const id of [1, 2, 3, 4]) {
    inFlight.push(batcher.insert(request(id)));
    await nextTurn();
  }
  return inFlight;
}

/**
 * A batcher whose statements wait until released, in order (`releases`), over a queue of
 * 1,000 rows and 500 ms; each statement's ids are noted in `statements`.
 */
function heldBatcher() {
  const releases: (() => void)[] = [];
  const statements: string[][] = [];
  const batcher = new PlantInsertBatcher(
    async (rows) => {
      statements.push(rows.map(({ id }) => id));
      await new Promise<void>((resolve) => releases.push(resolve));
      return new Set(rows.map(({ id }) => id));
    },
    { maxRows: 1_000, maxWaitMs: 500 },
  );
  return { batcher, releases, statements };
}

/**
 * A heldBatcher with every slot busy, then a statement's worth of rows queued and one more:
 * that last row waits on after a slot frees and is to be refused as overload (`outcome`).
 * `drainAll()` releases every statement, and those a release starts, and expects every
 * other row answered.
 */
async function oneRowPastAStatement() {
  const { batcher, releases, statements } = heldBatcher();
  const inFlight = await fillSlots(batcher);
  const queued = Array.from({ length: 501 }, (_, index) =>
    batcher.insert(request(100 + index)),
  );
  const last = queued.pop()!;
  const outcome = expect(last).rejects.toEqual(new InsertQueueFullError());
  const drainAll = async () => {
    for (const release of releases.splice(0)) release();
    await nextTurn();
    for (const release of releases.splice(0)) release();
    await expect(Promise.all([...inFlight, ...queued])).resolves.toHaveLength(
      504,
    );
  };
  return { releases, statements, outcome, drainAll };
}

describe('PlantInsertBatcher', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends a request alone at once, without a timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
    const { batcher, statements } = fakeTable();
    await expect(batcher.insert(request(1))).resolves.toBe('created');
    expect(statements).toEqual([['1']]);
  });

  it('groups the inserts of one turn of the event loop into one statement', async () => {
    const { batcher, statements } = fakeTable({ taken: ['3'] });
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map((id) => batcher.insert(request(id))),
    );

    expect(outcomes).toEqual(['created', 'created', 'taken', 'created']);
    expect(statements).toEqual([['1', '2', '3', '4']]);
  });

  it('sends rows in id order, the first arrival of an id first, so statements cannot deadlock', async () => {
    const { batcher, statements } = fakeTable();
    const ids = ['9', '-3', '7', '10', '7', '-20'];
    const outcomes = await Promise.all(
      ids.map((id, index) =>
        batcher.insert({ ...request(id), row: row(id, `arrival ${index}`) }),
      ),
    );

    expect(statements).toEqual([['-20', '-3', '7', '7', '9', '10']]);
    // The earlier of the two 7s is the one written.
    expect(outcomes).toEqual([
      'created',
      'created',
      'created',
      'created',
      'taken',
      'created',
    ]);
  });

  it('compares ids as int64, not as text', async () => {
    const { batcher, statements } = fakeTable();
    await Promise.all(
      ['9223372036854775807', '100', '-9223372036854775808', '99'].map((id) =>
        batcher.insert(request(id)),
      ),
    );
    expect(statements).toEqual([
      ['-9223372036854775808', '99', '100', '9223372036854775807'],
    ]);
  });

  it('gives a statement the earliest deadline of its rows', async () => {
    const { batcher, deadlines } = fakeTable();
    const earliest = Date.now() + 300_000;
    await Promise.all([
      batcher.insert(request(1, { deadline: earliest + 200_000 })),
      batcher.insert(request(2, { deadline: earliest })),
    ]);
    expect(deadlines).toEqual([earliest]);
  });

  it('queues arrivals behind the statements in flight and sends them together next', async () => {
    const { batcher, statements } = fakeTable();
    const first = Array.from({ length: 4 }, (_, index) =>
      batcher.insert(request(index)),
    );
    await nextTurn();
    const later = Array.from({ length: 30 }, (_, index) =>
      batcher.insert(request(100 + index)),
    );
    await Promise.all([...first, ...later]);

    // The four of one turn go out as one statement; the thirty that arrive while it is in
    // flight go out together as the next, not one by one.
    expect(statements).toEqual([
      ['0', '1', '2', '3'],
      Array.from({ length: 30 }, (_, index) => String(100 + index)),
    ]);
  });

  it('when one row fails the batch (a data error), isolates it so only that row fails', async () => {
    const bad = withCode('value too long', '22001');
    const { batcher, statements } = fakeTable({
      fail: (ids) => (ids.includes('5') ? bad : undefined),
    });
    const outcomes = await Promise.allSettled(
      [1, 5, 9].map((id) => batcher.insert(request(id))),
    );

    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'created' },
      { status: 'rejected', reason: bad },
      { status: 'fulfilled', value: 'created' },
    ]);
    expect(statements).toEqual([
      ['1', '5', '9'],
      ['1', '5'],
      ['1'],
      ['5'],
      ['9'],
    ]);
  });

  it('isolates bad rows with few statements, never more at once than the in-flight limit', async () => {
    const bad = withCode('untranslatable character', '22P05');
    const { batcher, statements, peakConcurrency } = fakeTable({
      fail: (ids) => (ids.some((id) => id.endsWith('7')) ? bad : undefined),
    });
    // 2,000 rows: four full statements of 500, each holding bad rows.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 2_000 }, (_, index) =>
        batcher.insert(request(index * 1000 + (index % 250 === 0 ? 7 : 1))),
      ),
    );

    const failed = outcomes.filter(({ status }) => status === 'rejected');
    expect(failed).toHaveLength(8);
    expect(peakConcurrency()).toBeLessThanOrEqual(4);
    // Far fewer than one statement per row (the old fallback sent 2,004).
    expect(statements.length).toBeLessThan(200);
  });

  it.each([
    ['a statement timeout (57014)', withCode('canceling statement', '57014')],
    ['a deadlock (40P01)', withCode('deadlock detected', '40P01')],
    ['too many connections (53300)', withCode('too many clients', '53300')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
  ])(
    'fails the whole batch at once, with no per-row statements, on %s',
    async (_case, error) => {
      const { batcher, statements } = fakeTable({ fail: () => error });
      const outcomes = await Promise.allSettled(
        [1, 2, 3].map((id) => batcher.insert(request(id))),
      );

      expect(outcomes).toEqual([
        { status: 'rejected', reason: error },
        { status: 'rejected', reason: error },
        { status: 'rejected', reason: error },
      ]);
      expect(statements).toEqual([['1', '2', '3']]);
    },
  );

  it('sheds inserts past the queue limit at once with 503, and says it is overloaded', async () => {
    const { batcher, statements, release } = heldTable({
      maxRows: 3,
      maxWaitMs: 600_000,
    });
    // Four statements fill every slot; three more rows fill the queue.
    const inFlight = await fillSlots(batcher);
    const queued = [5, 6, 7].map((id) => batcher.insert(request(id)));
    expect(batcher.isOverloaded).toBe(true);

    await expect(batcher.insert(request(8))).rejects.toEqual(
      new InsertQueueFullError(),
    );
    release();
    await expect(Promise.all([...inFlight, ...queued])).resolves.toHaveLength(
      7,
    );
    expect(statements.flat()).not.toContain('8');
    expect(batcher.isOverloaded).toBe(false);
  });

  it('answers 503 for a row that waited too long for a slot, and never sends it; with no statement answered meanwhile, the database is the cause', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    const { batcher, statements, release } = heldTable({
      maxRows: 100,
      maxWaitMs: 500,
    });
    const inFlight = await fillSlots(batcher);
    const waiting = batcher.insert(request(5));
    const outcome = expect(waiting).rejects.toBeInstanceOf(
      DatabaseDeadlineError,
    );

    await vi.advanceTimersByTimeAsync(501);
    await outcome;
    release();
    await Promise.all(inFlight);
    await nextTurn();
    expect(statements.flat()).not.toContain('5');
  });

  it('says it is overloaded when a row waited too long while statements were answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    // Each statement held until released on its own, first in first out.
    const { releases, statements, outcome, drainAll } =
      await oneRowPastAStatement();
    await vi.advanceTimersByTimeAsync(100);
    releases.shift()?.();
    await nextTurn();
    await nextTurn();
    expect(statements).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(401);
    await outcome;
    expect(statements.flat()).not.toContain('600');
    await drainAll();
  });

  it('says it is overloaded once its oldest waiting row has waited maxWaitMs, before that row is answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { batcher, release } = heldTable({ maxRows: 100, maxWaitMs: 500 });
    const inFlight = await fillSlots(batcher);
    const queuedAt = Date.now();
    const waiting = batcher.insert(request(5));
    void waiting.catch(() => undefined);
    expect(batcher.isOverloaded).toBe(false);
    // The clock alone moves: the timer that answers the row has not run yet.
    vi.setSystemTime(queuedAt + 499);
    expect(batcher.isOverloaded).toBe(false);
    vi.setSystemTime(queuedAt + 500);
    expect(batcher.isOverloaded).toBe(true);
    release();
    await Promise.all(inFlight);
  });

  it('answers a row waiting for a slot when its wait runs out, exactly, with one timer however many rows wait', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { batcher, release } = heldTable({
      maxRows: 1_000,
      maxWaitMs: 500,
    });
    const inFlight = await fillSlots(batcher);
    const queuedAt = Date.now();
    const settled: number[] = [];
    const waiting = Array.from({ length: 50 }, (_, index) =>
      batcher.insert(request(10 + index)).catch((error: unknown) => {
        settled.push(Date.now());
        return error;
      }),
    );
    expect(vi.getTimerCount()).toBe(1);

    await vi.advanceTimersToNextTimerAsync();
    expect(Date.now()).toBe(queuedAt + 500);
    expect(settled).toEqual(Array.from({ length: 50 }, () => queuedAt + 500));
    for (const outcome of await Promise.all(waiting))
      expect(outcome).toBeInstanceOf(DatabaseDeadlineError);
    release();
    await Promise.all(inFlight);
    // Idle again: no timer left to wake the process.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers each waiting row when its own wait runs out, a later arrival later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { batcher, release } = heldTable({ maxRows: 100, maxWaitMs: 500 });
    const inFlight = await fillSlots(batcher);
    const start = Date.now();
    const settledAt: Record<string, number> = {};
    const watch = (id: number) =>
      batcher.insert(request(id)).catch(() => {
        settledAt[id] = Date.now() - start;
      });
    const first = watch(5);
    await vi.advanceTimersByTimeAsync(200);
    const second = watch(6);
    await vi.advanceTimersByTimeAsync(300);
    expect(settledAt).toEqual({ 5: 500 });
    await vi.advanceTimersByTimeAsync(200);
    expect(settledAt).toEqual({ 5: 500, 6: 700 });
    await Promise.all([first, second]);
    release();
    await Promise.all(inFlight);
  });

  it('answers 503 for a row left over when one turn brings more rows than four statements take', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { batcher, statements, release } = heldTable({
      maxRows: 10_000,
      maxWaitMs: 500,
    });
    // The first 32 go at once (nothing in flight), then three full statements at the
    // turn's end fill the four slots.
    const sent = Array.from({ length: 1_532 }, (_, index) =>
      batcher.insert(request(index)),
    );
    const leftOver = batcher.insert(request(5_000));
    const outcome = expect(leftOver).rejects.toBeInstanceOf(
      DatabaseDeadlineError,
    );
    await nextTurn();
    expect(statements.map((ids) => ids.length)).toEqual([32, 500, 500, 500]);

    await vi.advanceTimersByTimeAsync(500);
    await outcome;
    release();
    await expect(Promise.all(sent)).resolves.toHaveLength(1_532);
    expect(statements.flat()).not.toContain('5000');
  });

  it('with no statement in flight, sends 32 waiting rows at once, before the turn ends, and the rest of the turn together at its end', async () => {
    const { batcher, statements, release } = heldTable();
    const ids = Array.from({ length: 40 }, (_, index) => 100 + index);
    const outcomes = ids.map((id) => batcher.insert(request(id)));

    expect(statements).toEqual([ids.slice(0, 32).map(String)]);
    await nextTurn();
    expect(statements).toEqual([
      ids.slice(0, 32).map(String),
      ids.slice(32).map(String),
    ]);
    release();
    await expect(Promise.all(outcomes)).resolves.toEqual(
      ids.map(() => 'created'),
    );
  });

  it('with a statement in flight, keeps a turn of any size for the end of the turn', async () => {
    const { batcher, statements, release } = heldTable();
    const first = batcher.insert(request(1));
    await nextTurn();
    const ids = Array.from({ length: 100 }, (_, index) => 100 + index);
    const outcomes = ids.map((id) => batcher.insert(request(id)));

    expect(statements).toEqual([['1']]);
    await nextTurn();
    expect(statements).toEqual([['1'], ids.map(String)]);
    release();
    await expect(Promise.all([first, ...outcomes])).resolves.toHaveLength(101);
  });

  it('says it is overloaded, not that the database is down, when a statement was answered after the row was queued, in the same millisecond', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { releases, outcome, drainAll } = await oneRowPastAStatement();
    // Answered with the clock not moved since the row was queued.
    releases.shift()?.();
    await nextTurn();
    await nextTurn();
    await vi.advanceTimersByTimeAsync(500);
    await outcome;
    await drainAll();
  });

  it('never sends a row whose client left before it was sent', async () => {
    const { batcher, statements, release } = heldTable();
    const inFlight = await fillSlots(batcher);
    let left = false;
    const gone = batcher.insert(request(5, { clientGone: () => left }));
    const stays = batcher.insert(request(6, { clientGone: () => false }));

    left = true;
    release();
    await expect(gone).rejects.toEqual(new InsertClientGoneError());
    await expect(stays).resolves.toBe('created');
    await Promise.all(inFlight);
    expect(statements.flat()).not.toContain('5');
  });
});
