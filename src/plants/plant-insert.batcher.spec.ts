import {
  type InsertRows,
  PlantInsertBatcher,
  type PlantRow,
} from './plant-insert.batcher.js';

/** A stand-in for PostgreSQL: a table of ids, and ON CONFLICT DO NOTHING semantics. */
function fakeTable(
  taken: string[] = [],
  fail?: (ids: string[]) => Error | undefined,
) {
  const stored = new Set(taken);
  const statements: string[][] = [];
  const insertRows = vi.fn<InsertRows>(async (rows) => {
    const ids = rows.map((row) => row.id);
    statements.push(ids);
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
  });
  const batcher = new PlantInsertBatcher(insertRows);
  return { batcher, statements };
}

const row = (id: string, name = `Plant ${id}`): PlantRow => ({
  id,
  name,
  tag: null,
});

describe('PlantInsertBatcher', () => {
  it('sends a request alone at once, without a timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });
    try {
      const { batcher, statements } = fakeTable();
      await expect(batcher.insert(row('1'))).resolves.toBe('created');
      expect(statements).toEqual([['1']]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('groups the inserts of one turn of the event loop into one statement', async () => {
    const { batcher, statements } = fakeTable(['3']);
    const outcomes = await Promise.all(
      ['1', '2', '3', '4'].map((id) => batcher.insert(row(id))),
    );

    expect(outcomes).toEqual(['created', 'created', 'taken', 'created']);
    expect(statements).toEqual([['1', '2', '3', '4']]);
  });

  it('tells the first of two rows with one id that it created it, the second that it is taken', async () => {
    const { batcher } = fakeTable();
    const outcomes = await Promise.all([
      batcher.insert(row('7', 'first')),
      batcher.insert(row('7', 'second')),
    ]);
    expect(outcomes).toEqual(['created', 'taken']);
  });

  it('queues arrivals behind the statements in flight and sends them together next', async () => {
    const { batcher, statements } = fakeTable();
    const first = Array.from({ length: 4 }, (_, index) =>
      batcher.insert(row(`a${index}`)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 30 }, (_, index) =>
      batcher.insert(row(`b${index}`)),
    );
    await Promise.all([...first, ...later]);

    expect(statements.flat()).toHaveLength(34);
    expect(statements.length).toBeLessThan(34);
  });

  it('gives each row its own statement when one row fails the batch, so only that row fails', async () => {
    const bad = new Error('value too long');
    const { batcher, statements } = fakeTable([], (ids) =>
      ids.includes('bad') ? bad : undefined,
    );
    const outcomes = await Promise.allSettled(
      ['1', 'bad', '2'].map((id) => batcher.insert(row(id))),
    );

    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'created' },
      { status: 'rejected', reason: bad },
      { status: 'fulfilled', value: 'created' },
    ]);
    expect(statements).toEqual([['1', 'bad', '2'], ['1'], ['bad'], ['2']]);
  });

  it('fails the whole batch at once when the connection was lost, for the callers to retry', async () => {
    const lost = Object.assign(
      new Error('Connection terminated unexpectedly'),
      { code: undefined },
    );
    const { batcher, statements } = fakeTable([], () => lost);
    const outcomes = await Promise.allSettled(
      ['1', '2'].map((id) => batcher.insert(row(id))),
    );

    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'rejected',
      'rejected',
    ]);
    expect(statements).toEqual([['1', '2']]);
  });
});
