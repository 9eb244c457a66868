import { Injectable } from '@nestjs/common';
import { isLostConnection } from '../database/database-errors.js';
import { ApiError } from '../errors/api-error.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { NewPlant } from './dto/new-plant.dto.js';
import { Plant } from './dto/plant.dto.js';
import { PlantsSettings } from './plants-module.options.js';
import { PlantsRepository } from './plants.repository.js';

const LOST_CONNECTION_ATTEMPTS = 3;

/**
 * Creates plants. The id is unique; the database, not this process, decides races: the
 * INSERT skips an existing id (ON CONFLICT DO NOTHING) and only then is the stored row
 * read. The same content again is a safe retry (200, nothing written); other content under
 * a taken id is a conflict (409).
 */
@Injectable()
export class PlantsService {
  constructor(
    private readonly plants: PlantsRepository,
    private readonly metrics: MetricsService,
    private readonly settings: PlantsSettings,
  ) {}

  /** True while a new create would be refused 503 at once: load shedding asks first. */
  get isOverloaded(): boolean {
    return this.plants.isOverloaded;
  }

  /**
   * A pooled connection the server has ended (a restart, pg_terminate_backend) fails at
   * once; so may the next few, ended in the same sweep. Repeating is safe: if a lost
   * attempt did store the plant, the next one replays it. A database that cannot answer
   * is left to the exception filter (503). The whole database part of the create, retries
   * included, ends within the databaseRequestTimeoutMs option. `clientGone` says whether the client
   * has left: a plant not yet sent to the database then is never written.
   */
  async create(newPlant: NewPlant, clientGone?: () => boolean): Promise<Plant> {
    const deadline = Date.now() + this.settings.databaseRequestTimeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.createOrReplay(newPlant, deadline, clientGone);
      } catch (error) {
        if (attempt >= LOST_CONNECTION_ATTEMPTS || !isLostConnection(error))
          throw error;
      }
    }
  }

  private async createOrReplay(
    { id, name, tag }: NewPlant,
    deadline: number,
    clientGone: (() => boolean) | undefined,
  ): Promise<Plant> {
    const row = { id: id.toString(), name, tag: tag ?? null };
    const outcome = await this.plants.insertOrSkip({
      row,
      deadline,
      clientGone,
    });
    if (outcome === 'created') {
      this.metrics.plantsCreated.inc();
      return Plant.of(name, tag);
    }

    const stored = await this.plants.findById(row.id, deadline);
    if (stored.name !== row.name || stored.tag !== row.tag) {
      this.metrics.plantConflicts.inc();
      throw ApiError.conflict(
        'A plant with this id already exists with a different name or tag.',
      );
    }
    this.metrics.plantReplays.inc();
    return Plant.of(stored.name, stored.tag);
  }
}
