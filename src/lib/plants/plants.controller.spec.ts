import type { NewPlant } from './dto/new-plant.dto.js';
import { eventually } from '../../../test/support/poll.js';
import {
  DatabaseDeadlineError,
  DatabaseDownError,
} from '../database/database-errors.js';
import { ApiError } from '../errors/api-error.js';
import { PlantEntity } from './plant.entity.js';
import {
  FakePlantsTable,
  TaglessPlantEntity,
  failureOf,
  fern,
  lost,
  plantsOn,
  refused,
} from '../../../test/support/plants-in-memory.js';

describe('PlantsController, PlantsService and PlantsRepository, on a table in memory', () => {
  it('stores a plant under its exact id and answers its name and tag, never the id', async () => {
    const table = new FakePlantsTable();
    const { controller, request, counted } = await plantsOn(table);
    const id = 2n ** 63n - 1n;
    await expect(
      controller.create(fern(id, 'green'), request),
    ).resolves.toEqual({
      name: 'Fern',
      tag: 'green',
    });
    expect([...table.rows.values()]).toEqual([
      { id: '9223372036854775807', name: 'Fern', tag: 'green' },
    ]);
    expect(await counted()).toEqual({ created: 1, replayed: 0, conflicts: 0 });
  });

  it('stores a plant without a tag as null and answers without one', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    const answer = await controller.create(fern(1n), request);
    expect(JSON.stringify(answer)).toBe('{"name":"Fern"}');
    expect(table.rows.get('1')).toEqual({ id: '1', name: 'Fern', tag: null });
  });

  it('answers the same plant again as stored, writing nothing (a safe retry)', async () => {
    const table = new FakePlantsTable();
    const { controller, request, counted } = await plantsOn(table);
    await controller.create(fern(7n, 'green'), request);
    await expect(
      controller.create(fern(7n, 'green'), request),
    ).resolves.toEqual({
      name: 'Fern',
      tag: 'green',
    });
    await controller.create(fern(8n), request);
    await expect(controller.create(fern(8n), request)).resolves.toEqual({
      name: 'Fern',
    });
    expect(table.rows.size).toBe(2);
    expect(await counted()).toEqual({ created: 2, replayed: 2, conflicts: 0 });
  });

  it.each([
    ['another name', { id: 7n, name: 'Moss', tag: 'green' }],
    ['another tag', { id: 7n, name: 'Fern', tag: 'blue' }],
    ['no tag', { id: 7n, name: 'Fern' }],
  ])(
    'refuses %s under a taken id with 409, keeping what was stored',
    async (_case, other) => {
      const table = new FakePlantsTable();
      const { controller, request, counted } = await plantsOn(table);
      await controller.create(fern(7n, 'green'), request);
      const error = await failureOf(
        controller.create(other as NewPlant, request),
      );
      expect(error).toBeInstanceOf(ApiError);
      expect({
        status: (error as ApiError).getStatus(),
        message: (error as ApiError).message,
      }).toEqual({
        status: 409,
        message:
          'A plant with this id already exists with a different name or tag.',
      });
      expect(table.rows.get('7')).toEqual({
        id: '7',
        name: 'Fern',
        tag: 'green',
      });
      expect(await counted()).toEqual({
        created: 1,
        replayed: 0,
        conflicts: 1,
      });
    },
  );

  it('refuses a tag given to a plant stored without one with 409', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    await controller.create(fern(3n), request);
    expect(
      (
        (await failureOf(controller.create(fern(3n, 'x'), request))) as ApiError
      ).getStatus(),
    ).toBe(409);
  });

  it('tries again on a fresh connection when the database ended it, up to 3 attempts in all', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    table.failures = [lost(), lost()];
    await expect(controller.create(fern(1n), request)).resolves.toEqual({
      name: 'Fern',
    });
    expect(table.statements).toHaveLength(3);

    table.failures = [lost(), lost(), lost()];
    table.statements.length = 0;
    expect(await failureOf(controller.create(fern(2n), request))).toEqual(
      lost(),
    );
    expect(table.statements).toHaveLength(3);
    expect(table.rows.has('2')).toBe(false);
  });

  it('sends a lone create as a one-row INSERT ... VALUES, and the creates of one turn as one grouped INSERT', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    await controller.create(fern(1n), request);
    expect(table.statements).toHaveLength(1);
    expect(table.statements[0]).toMatch(/VALUES \(\$1::bigint, /);
    table.statements.length = 0;
    await Promise.all([
      controller.create(fern(2n), request),
      controller.create(fern(3n), request),
    ]);
    expect(table.statements).toHaveLength(1);
    expect(table.statements[0]).toMatch(/unnest\(\$1::bigint\[\], /);
    expect([...table.rows.keys()]).toEqual(['1', '2', '3']);
    // The grouped statement carries each row's own name and tag, as the lone one does.
    for (const id of ['2', '3'])
      expect(table.rows.get(id)).toEqual({ ...table.rows.get('1'), id });
    // Each by a name of its own, so PostgreSQL parses and plans it once per connection.
    const [one, grouped] = table.names;
    expect(table.names).toEqual([one, grouped]);
    expect(one).not.toBe(grouped);
    expect(one).toMatch(/^plant-store-/);
  });

  it('does not repeat a statement that failed for another reason', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    const invalid = Object.assign(new Error('invalid input syntax'), {
      code: '22P02',
    });
    table.failures = [invalid];
    expect(await failureOf(controller.create(fern(1n), request))).toBe(invalid);
    expect(table.statements).toHaveLength(1);
  });

  it('answers a create past insertQueueLimit 503 overloaded, the Error answer load shedding gives', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table, {
      insertQueueLimit: 1,
      databaseRequestTimeoutMs: 200,
    });
    table.hung = true;
    // The first is sent (its statement hangs), the second waits: the queue of one is full.
    const sent = failureOf(controller.create(fern(1n), request));
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = failureOf(controller.create(fern(2n), request));
    const refused = await failureOf(controller.create(fern(3n), request));
    expect(refused).toEqual(ApiError.overloaded());
    await Promise.all([sent, waiting]);
    // The refused create was never sent, then or later.
    expect(table.sentIds).not.toContain('3');
    expect(table.sentIds).toContain('1');
  });

  it('never writes the plant of a client that left before it was sent (499)', async () => {
    const table = new FakePlantsTable();
    const { controller, request, client } = await plantsOn(table);
    client.destroyed = true;
    const gone = await failureOf(controller.create(fern(1n), request));
    expect((gone as ApiError).getStatus()).toBe(499);
    const unwritable = await plantsOn(table);
    unwritable.client.writable = false;
    const alsoGone = await failureOf(
      unwritable.controller.create(fern(2n), unwritable.request),
    );
    expect((alsoGone as ApiError).getStatus()).toBe(499);
    expect(table.statements).toEqual([]);
  });

  it('refuses at once, sending nothing, while the database is known not to commit', async () => {
    const table = new FakePlantsTable();
    const { controller, request, writeCircuit } = await plantsOn(table);
    table.refusing = true;
    table.failures = [refused()];
    await failureOf(controller.create(fern(1n), request));
    expect(writeCircuit.canCommit).toBe(false);
    table.statements.length = 0;
    expect(
      await failureOf(controller.create(fern(2n), request)),
    ).toBeInstanceOf(DatabaseDownError);
    expect(table.statements).toEqual([]);
    writeCircuit.beforeApplicationShutdown(); // its probes stop
  });

  it('gives up on a silent database by the request deadline', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table, {
      databaseRequestTimeoutMs: 20,
    });
    table.hung = true;
    expect(
      await failureOf(controller.create(fern(1n), request)),
    ).toBeInstanceOf(DatabaseDeadlineError);
  });

  it('says it is not overloaded while its insert queue is empty', async () => {
    const { service } = await plantsOn(new FakePlantsTable());
    expect(service.isOverloaded).toBe(false);
  });

  it('fails, naming the fault, when a taken id has no row to read', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(table);
    table.vanished.add('5');
    await expect(controller.create(fern(5n), request)).rejects.toThrow(
      'A taken plant id has no row.',
    );
  });

  it("tells the host's event emitter of each plant stored, once, and not of a replay", async () => {
    const emitted: [string, unknown][] = [];
    const { controller, request } = await plantsOn(
      new FakePlantsTable(),
      {},
      PlantEntity,
      { emit: (event, payload) => emitted.push([event, payload]) > 0 },
    );
    await controller.create(fern(7n, 'shade'), request);
    await controller.create(fern(7n, 'shade'), request);
    await controller.create(fern(8n), request);
    expect(emitted).toEqual([
      ['plant.created', { id: '7', name: 'Fern', tag: 'shade' }],
      ['plant.created', { id: '8', name: 'Fern', tag: undefined }],
    ]);
  });

  it('finds a stored plant by its id, as a bigint or its decimal text', async () => {
    const table = new FakePlantsTable();
    const { controller, service, request } = await plantsOn(table);
    await controller.create(fern(12345n, 'shade'), request);
    await controller.create(fern(-7n), request);
    await expect(service.findById('12345')).resolves.toEqual({
      id: '12345',
      name: 'Fern',
      tag: 'shade',
    });
    await expect(service.findById(-7n)).resolves.toEqual({
      id: '-7',
      name: 'Fern',
    });
    await expect(service.findById('-7')).resolves.toEqual({
      id: '-7',
      name: 'Fern',
    });
    await expect(service.findById('0')).resolves.toBeUndefined();
  });

  it.each(['abc', 'x5', '5x', '05', '-', '', ' 5', '9223372036854775808'])(
    'finds nothing, asking the database nothing, for an id that is not an int64 in decimal: %j',
    async (id) => {
      const table = new FakePlantsTable();
      const { service } = await plantsOn(table);
      await expect(service.findById(id)).resolves.toBeUndefined();
      expect(table.statements).toEqual([]);
    },
  );

  it('shows the rows waiting for a statement slot in its metrics', async () => {
    const table = new FakePlantsTable();
    const { controller, request, metrics } = await plantsOn(table, {
      databaseRequestTimeoutMs: 60_000,
    });
    table.hung = true;
    const shown = (line: string) => async () =>
      (await metrics.registry.metrics()).includes(line) ? true : undefined;
    // Four statements, one per turn, fill every slot.
    for (const id of [1n, 2n, 3n, 4n]) {
      void controller.create(fern(id), request).catch(() => undefined);
      await eventually(
        `statement ${id} in flight`,
        shown(`plant_insert_statements_in_flight ${id}`),
      );
    }
    void controller.create(fern(5n), request).catch(() => undefined);
    await eventually('a row waiting', shown('plant_insert_rows_waiting 1'));
    // The fifth row waits for a slot: no statement has carried it.
    expect(table.sentIds).toEqual(['1', '2', '3', '4']);
  });

  it('fails the first create, naming the column, when the entity it was given has no tag column', async () => {
    const table = new FakePlantsTable();
    const { controller, request } = await plantsOn(
      table,
      {},
      TaglessPlantEntity,
    );
    await expect(controller.create(fern(5n), request)).rejects.toThrow(
      'No column for tag',
    );
  });

  it('shows a statement in flight in its metrics while the database works on it', async () => {
    const table = new FakePlantsTable();
    const { controller, request, metrics } = await plantsOn(table, {
      databaseRequestTimeoutMs: 60_000,
    });
    table.hung = true;
    void controller.create(fern(1n), request).catch(() => undefined);
    await eventually('the statement in flight', async () =>
      (await metrics.registry.metrics()).includes(
        'plant_insert_statements_in_flight 1',
      )
        ? true
        : undefined,
    );
    expect(table.sentIds).toEqual(['1']);
    expect(table.rows.size).toBe(0);
  });
});
