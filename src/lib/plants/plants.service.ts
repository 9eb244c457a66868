import { Injectable } from '@nestjs/common';
import { retryingLostConnection } from '../database/database-errors.js';
import {
  InsertClientGoneError,
  InsertQueueFullError,
} from './insert-refusals.js';
import { CreateTracing } from './create-tracing.js';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { NewPlant } from './dto/new-plant.dto.js';
import { Plant } from './dto/plant.dto.js';
import { PlantCreatedEvent } from './plant-events.js';
import { PlantEvents } from './plant-events.js';
import { PlantsSettings } from './plants-module.options.js';
import { PlantsRepository } from './plants.repository.js';
import { isInt64 } from '../field-rules/int64.js';

/** A stored plant, as findById gives it: the id exact, in decimal. */
export interface StoredPlant {
  id: string;
  name: string;
  tag?: string;
}

const DECIMAL_INTEGER = /^-?(?:0|[1-9]\d*)$/;

/** The int64 that `id` writes, or undefined: findById takes a route's parameter as it is. */
function int64Of(id: string | bigint): bigint | undefined {
  if (typeof id === 'string' && !DECIMAL_INTEGER.test(id)) return undefined;
  const value = BigInt(id);
  return isInt64(value) ? value : undefined;
}

/** The database decides races: the same content again is a safe retry (200), other content a conflict (409). */
@Injectable()
export class PlantsService {
  constructor(
    private readonly plants: PlantsRepository,
    private readonly metrics: MetricsService,
    private readonly settings: PlantsSettings,
    private readonly events: PlantEvents,
  ) {}

  /** The stored plant with this id, or undefined (also for a non-int64 `id`); bounded like a create. */
  async findById(id: string | bigint): Promise<StoredPlant | undefined> {
    const value = int64Of(id);
    if (value === undefined) return undefined;
    const row = await this.plants.findById(
      value.toString(),
      Date.now() + this.settings.databaseRequestTimeoutMs,
    );
    if (row === undefined) return undefined;
    return row.tag === null
      ? { id: row.id, name: row.name }
      : { id: row.id, name: row.name, tag: row.tag };
  }

  /** True while a new create would be refused 503 at once: load shedding asks first. */
  get isOverloaded(): boolean {
    return this.plants.isOverloaded;
  }

  /** Retries a lost pooled connection (safe: a stored plant is replayed); a plant whose client left is never sent. */
  async create(newPlant: NewPlant, clientGone?: () => boolean): Promise<Plant> {
    const tracing = CreateTracing.start();
    if (tracing === undefined)
      return this.createWithRetries(newPlant, clientGone);
    try {
      const plant = await tracing.around(() =>
        this.createWithRetries(newPlant, clientGone, tracing),
      );
      tracing.succeeded();
      return plant;
    } catch (error) {
      tracing.failed(error);
      throw error;
    }
  }

  private async createWithRetries(
    newPlant: NewPlant,
    clientGone: (() => boolean) | undefined,
    tracing?: CreateTracing,
  ): Promise<Plant> {
    const deadline = Date.now() + this.settings.databaseRequestTimeoutMs;
    try {
      return await retryingLostConnection(() =>
        this.createOrReplay(newPlant, deadline, clientGone, tracing),
      );
    } catch (error) {
      throw toApiError(error);
    }
  }

  private async createOrReplay(
    { id, name, tag }: NewPlant,
    deadline: number,
    clientGone: (() => boolean) | undefined,
    tracing: CreateTracing | undefined,
  ): Promise<Plant> {
    const row = { id: id.toString(), name, tag: tag ?? null };
    const outcome = await this.plants.insertOrSkip({
      row,
      deadline,
      clientGone,
      tracing,
    });
    if (outcome === 'created') {
      tracing?.decided('created');
      this.metrics.plantsCreated.inc();
      this.events.created(new PlantCreatedEvent(row.id, name, tag));
      return Plant.of(name, tag);
    }

    // Plants are never deleted, so a taken id is always there to read.
    const stored = await this.plants.findById(row.id, deadline);
    if (stored === undefined) throw new Error('A taken plant id has no row.');
    if (stored.name !== row.name || stored.tag !== row.tag) {
      this.metrics.plantConflicts.inc();
      tracing?.decided('conflict');
      throw ApiError.conflict(
        'A plant with this id already exists with a different name or tag.',
      );
    }
    this.metrics.plantReplays.inc();
    tracing?.decided('replayed');
    return Plant.of(stored.name, stored.tag);
  }
}

/** The batcher's refusals as the Error answers they get; anything else as it is. */
function toApiError(error: unknown): unknown {
  if (error instanceof InsertQueueFullError) return ApiError.overloaded();
  if (error instanceof InsertClientGoneError) return ApiError.clientGone();
  return error;
}
