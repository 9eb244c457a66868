import {
  DatabaseDeadlineError,
  DatabaseDownError,
} from '../database/database-errors.js';
import {
  FakePlantsTable,
  plantsOn,
  refused,
} from '../../../test/support/plants-in-memory.js';

const soon = () => Date.now() + 1_000;
const row = (id: string, tag: string | null = null) => ({
  id,
  name: 'Fern',
  tag,
});

describe('PlantsRepository, the one owner of the plants table', () => {
  it('writes a row unless its id is taken, and says which: created, then taken, keeping the first', async () => {
    const table = new FakePlantsTable();
    const { repository } = await plantsOn(table);
    expect(
      await repository.insertOrSkip({
        row: row('1', 'green'),
        deadline: soon(),
      }),
    ).toBe('created');
    expect(
      await repository.insertOrSkip({ row: row('1'), deadline: soon() }),
    ).toBe('taken');
    expect([...table.rows.values()]).toEqual([row('1', 'green')]);
  });

  it('reads a row by its id with a named statement: the stored row, or undefined', async () => {
    const table = new FakePlantsTable();
    const { repository } = await plantsOn(table);
    await repository.insertOrSkip({ row: row('5'), deadline: soon() });
    expect(await repository.findById('5', soon())).toEqual(row('5'));
    expect(await repository.findById('6', soon())).toBeUndefined();
    expect(table.names.length).toBe(3);
    expect(new Set(table.names).size).toBe(2);
  });

  it('refuses at once, sending nothing, while the database is known not to commit; a silent one fails by the deadline', async () => {
    const table = new FakePlantsTable();
    const { repository, writeCircuit } = await plantsOn(table);
    table.refusing = true;
    table.failures = [refused()];
    await expect(
      repository.insertOrSkip({ row: row('1'), deadline: soon() }),
    ).rejects.toThrow();
    await vi.waitFor(() => expect(writeCircuit.canCommit).toBe(false));
    table.sentIds.length = 0;
    await expect(
      repository.insertOrSkip({ row: row('2'), deadline: soon() }),
    ).rejects.toBeInstanceOf(DatabaseDownError);
    expect(table.sentIds).toEqual([]);
    writeCircuit.beforeApplicationShutdown();

    const hung = new FakePlantsTable();
    const silent = await plantsOn(hung);
    hung.hung = true;
    await expect(
      silent.repository.findById('1', Date.now() + 50),
    ).rejects.toBeInstanceOf(DatabaseDeadlineError);
  });
});
