import type { ModuleRef } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { DatabaseDownError } from '../database/database-errors.js';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import type { NewPlant } from './dto/new-plant.dto.js';
import { PLANT_CREATED, PlantEvents } from './plant-events.js';
import type { InsertRequest, PlantRow } from './plant-insert.batcher.js';
import { PlantsSettings } from './plants-module.options.js';
import type { PlantsRepository } from './plants.repository.js';
import { PlantsService } from './plants.service.js';
import {
  InsertClientGoneError,
  InsertQueueFullError,
} from './insert-refusals.js';

const lost = () => new Error('Connection terminated unexpectedly');

/**
 * PlantsService over a repository that answers as told: what the service itself decides
 * (created, replayed, 409, the refusals' Error answers, the lost-connection retry), with
 * the repository's SQL left to plants.repository.spec.ts.
 */
function serviceOver(repository: {
  insertOrSkip: (request: InsertRequest) => Promise<'created' | 'taken'>;
  findById?: (id: string) => Promise<PlantRow | undefined>;
  isOverloaded?: boolean;
}) {
  const emitted: unknown[] = [];
  const emitter = {
    emit: (event: string, payload: unknown) => emitted.push({ event, payload }),
  };
  const metrics = new MetricsService({ driver: {} } as DataSource);
  const insertOrSkip = vi.fn(repository.insertOrSkip);
  const findById = vi.fn(
    repository.findById ?? (() => Promise.resolve(undefined)),
  );
  const service = new PlantsService(
    {
      insertOrSkip,
      findById,
      isOverloaded: repository.isOverloaded ?? false,
    } as unknown as PlantsRepository,
    metrics,
    new PlantsSettings({ databaseRequestTimeoutMs: 1_000 }),
    new PlantEvents({ get: () => emitter } as unknown as ModuleRef),
  );
  const counted = async () => ({
    created: (await metrics.plantsCreated.get()).values[0].value,
    replayed: (await metrics.plantReplays.get()).values[0].value,
    conflicts: (await metrics.plantConflicts.get()).values[0].value,
  });
  return { service, insertOrSkip, findById, emitted, counted };
}

const fern = { id: 7n, name: 'Fern', tag: 'green' } as NewPlant;
const storedFern: PlantRow = { id: '7', name: 'Fern', tag: 'green' };

describe('PlantsService', () => {
  it('answers a new plant with its name and tag, counts it and tells the host once', async () => {
    const { service, insertOrSkip, emitted, counted } = serviceOver({
      insertOrSkip: () => Promise.resolve('created'),
    });
    expect(await service.create(fern)).toEqual({ name: 'Fern', tag: 'green' });
    expect(insertOrSkip.mock.calls[0][0].row).toEqual(storedFern);
    expect(emitted).toEqual([
      {
        event: PLANT_CREATED,
        payload: expect.objectContaining({
          id: '7',
          name: 'Fern',
          tag: 'green',
        }),
      },
    ]);
    expect(await counted()).toEqual({ created: 1, replayed: 0, conflicts: 0 });
  });

  it('replays a taken id stored with the same name and tag, and refuses another with 409, telling the host of neither', async () => {
    const { service, emitted, counted } = serviceOver({
      insertOrSkip: () => Promise.resolve('taken'),
      findById: () => Promise.resolve(storedFern),
    });
    expect(await service.create(fern)).toEqual({ name: 'Fern', tag: 'green' });
    await expect(
      service.create({ id: 7n, name: 'Fern' } as NewPlant),
    ).rejects.toEqual(
      ApiError.conflict(
        'A plant with this id already exists with a different name or tag.',
      ),
    );
    expect(emitted).toEqual([]);
    expect(await counted()).toEqual({ created: 0, replayed: 1, conflicts: 1 });
  });

  it("turns the insert queue's refusals into their Error answers: 503 overloaded, 499 client gone", async () => {
    const full = serviceOver({
      insertOrSkip: () => Promise.reject(new InsertQueueFullError()),
    });
    await expect(full.service.create(fern)).rejects.toEqual(
      ApiError.overloaded(),
    );
    const gone = serviceOver({
      insertOrSkip: () => Promise.reject(new InsertClientGoneError()),
    });
    await expect(gone.service.create(fern)).rejects.toEqual(
      ApiError.clientGone(),
    );
  });

  it('leaves a database that cannot commit to the exception filter (DatabaseDownError as it is)', async () => {
    const { service, insertOrSkip } = serviceOver({
      insertOrSkip: () => Promise.reject(new DatabaseDownError()),
    });
    await expect(service.create(fern)).rejects.toBeInstanceOf(
      DatabaseDownError,
    );
    expect(insertOrSkip).toHaveBeenCalledTimes(1);
  });

  it('tries a create again on a lost connection, up to 3 attempts in all, within one deadline', async () => {
    const answers = [lost, lost];
    const { service, insertOrSkip } = serviceOver({
      insertOrSkip: () => {
        const next = answers.shift();
        return next === undefined
          ? Promise.resolve('created')
          : Promise.reject(next());
      },
    });
    expect(await service.create(fern)).toEqual({ name: 'Fern', tag: 'green' });
    expect(insertOrSkip).toHaveBeenCalledTimes(3);
    const deadlines = insertOrSkip.mock.calls.map(
      ([request]) => request.deadline,
    );
    expect(new Set(deadlines).size).toBe(1);

    const alwaysLost = serviceOver({
      insertOrSkip: () => Promise.reject(lost()),
    });
    await expect(alwaysLost.service.create(fern)).rejects.toThrow(
      'Connection terminated unexpectedly',
    );
    expect(alwaysLost.insertOrSkip).toHaveBeenCalledTimes(3);
  });

  it('finds a stored plant by an int64 id, bigint or decimal text, without a tag it lacks; anything else is not there, unasked', async () => {
    const { service, findById } = serviceOver({
      insertOrSkip: () => Promise.resolve('created'),
      findById: (id) =>
        Promise.resolve(
          id === '7' ? { id: '7', name: 'Fern', tag: null } : undefined,
        ),
    });
    expect(await service.findById(7n)).toEqual({ id: '7', name: 'Fern' });
    expect(await service.findById('7')).toEqual({ id: '7', name: 'Fern' });
    expect(await service.findById('8')).toBeUndefined();
    findById.mockClear();
    for (const notAnId of ['seven', '9223372036854775808', '', '07x'])
      expect(await service.findById(notAnId)).toBeUndefined();
    expect(findById).not.toHaveBeenCalled();
  });

  it('says it is overloaded when its repository does: load shedding asks it first', () => {
    const overloaded = serviceOver({
      insertOrSkip: () => Promise.resolve('created'),
      isOverloaded: true,
    });
    expect(overloaded.service.isOverloaded).toBe(true);
    const idle = serviceOver({
      insertOrSkip: () => Promise.resolve('created'),
    });
    expect(idle.service.isOverloaded).toBe(false);
  });
});
