import { EventEmitter } from 'node:events';
import type { ModuleRef } from '@nestjs/core';
import type { Request } from 'express';
import type { Pool } from 'pg';
import {
  Column,
  DataSource,
  Entity,
  PrimaryColumn,
  type Repository,
} from 'typeorm';
import { WriteCircuit } from '../../src/lib/database/write-circuit.js';
import { MetricsService } from '../../src/lib/metrics/metrics.service.js';
import type { NewPlant } from '../../src/lib/plants/dto/new-plant.dto.js';
import type { PlantRow } from '../../src/lib/plants/plant-insert.batcher.js';
import { PlantEntity } from '../../src/lib/plants/plant.entity.js';
import { PlantsSettings } from '../../src/lib/plants/plants-module.options.js';
import { PlantsController } from '../../src/lib/plants/plants.controller.js';
import { PlantsRepository } from '../../src/lib/plants/plants.repository.js';
import { PlantsService } from '../../src/lib/plants/plants.service.js';
import { PlantEvents } from '../../src/lib/plants/plant-events.js';

export const lost = () => new Error('Connection terminated unexpectedly');
export const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

/**
 * Where PostgreSQL would be: a pg pool over a table in memory that does what the two
 * statements ask of PostgreSQL (an INSERT of one row or of a batch that skips a taken id and
 * returns the ids it wrote, a SELECT by id), counting them; WriteCircuit's probes commit. `failures` fail the next statements in turn; `hung` leaves them
 * unanswered.
 */
export class FakePlantsTable {
  readonly rows = new Map<string, PlantRow>();
  readonly statements: string[] = [];
  /** The id of every row an INSERT sent carried, in order, answered or not. */
  readonly sentIds: string[] = [];
  failures: Error[] = [];
  hung = false;
  /** Connections refused: WriteCircuit's probes fail too. */
  refusing = false;
  /** Ids taken by a row the SELECT no longer finds (plants are never deleted: a fault). */
  readonly vanished = new Set<string>();

  // As pg-pool: it tells its 'acquire' listeners of each connection it hands out.
  readonly pool: Pool = Object.assign(new EventEmitter(), {
    connect: async () => {
      const client = Object.assign(new EventEmitter(), {
        // As pg takes it: a text and its values, or one object (a named statement).
        query: (
          sql: string | { name: string; text: string; values: unknown[] },
          parameters: unknown[],
        ) =>
          typeof sql === 'string'
            ? this.query(sql, parameters)
            : this.named(sql),
        release: () => {},
      });
      this.pool.emit('acquire', client);
      return client;
    },
  }) as unknown as Pool;

  /** The name of every statement run by name, in order. */
  readonly names: string[] = [];

  private named(statement: { name: string; text: string; values: unknown[] }) {
    this.names.push(statement.name);
    return this.query(statement.text, statement.values);
  }

  private async query(sql: string, parameters: unknown[]) {
    // WriteCircuit's commit probe, after a failure: does the database commit?
    if (sql.includes('commit_probe')) {
      if (this.refusing) throw refused();
      return { rows: [] };
    }
    this.statements.push(sql);
    const insert =
      /^\s*INSERT INTO "plants".*ON CONFLICT \("id"\) DO NOTHING/s.test(sql);
    // A batch of rows (unnest of three arrays), or one row (VALUES).
    const [ids, names, tags] = (
      insert && Array.isArray(parameters[0])
        ? parameters
        : parameters.map((value) => [value])
    ) as string[][];
    if (insert) this.sentIds.push(...ids);
    if (this.hung) return new Promise(() => {});
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    if (insert) {
      const written = ids.filter((id, index) => {
        if (this.rows.has(id) || this.vanished.has(id)) return false;
        this.rows.set(id, { id, name: names[index], tag: tags[index] });
        return true;
      });
      return { rows: written.map((id) => ({ id })) };
    }
    if (/^\s*SELECT .* FROM "plants" WHERE "id" = \$1/s.test(sql)) {
      const row = this.rows.get(parameters[0] as string);
      return { rows: row === undefined ? [] : [row] };
    }
    throw new Error(`Not a statement of the plants table: ${sql}`);
  }
}

/** A host's entity for the table that lacks the tag column. */
@Entity({ name: 'plants' })
export class TaglessPlantEntity {
  @PrimaryColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;
}

export async function plantsOn(
  table: FakePlantsTable,
  options: {
    databaseRequestTimeoutMs?: number;
    insertQueueLimit?: number;
  } = {},
  entity: typeof PlantEntity | typeof TaglessPlantEntity = PlantEntity,
  /** The host's EventEmitter2, when it imported EventEmitterModule. */
  emitter?: { emit(event: string, payload: unknown): boolean },
) {
  const dataSource = new DataSource({
    type: 'postgres',
    entities: [entity],
  });
  // The entity's real metadata, without connecting: the statements are built from it.
  await (
    dataSource as unknown as { buildMetadatas(): Promise<void> }
  ).buildMetadatas();
  const repository = {
    metadata: dataSource.getMetadata(entity),
    manager: {
      connection: { driver: { master: table.pool }, isInitialized: true },
    },
  } as unknown as Repository<PlantEntity>;
  const settings = new PlantsSettings(options);
  const metrics = new MetricsService({ driver: {} } as DataSource);
  const writeCircuit = new WriteCircuit(() => table.pool);
  const plants = new PlantsRepository(
    repository,
    settings,
    metrics,
    writeCircuit,
  );
  const service = new PlantsService(
    plants,
    metrics,
    settings,
    // Without an emitter: a host without @nestjs/event-emitter's module.
    new PlantEvents({
      get: () => {
        if (emitter === undefined) throw new Error('not provided');
        return emitter;
      },
    } as unknown as ModuleRef),
  );
  const client = { destroyed: false, writable: true };
  const request = { socket: client } as unknown as Request;
  const counted = async () => ({
    created: (await metrics.plantsCreated.get()).values[0].value,
    replayed: (await metrics.plantReplays.get()).values[0].value,
    conflicts: (await metrics.plantConflicts.get()).values[0].value,
  });
  return {
    controller: new PlantsController(service),
    service,
    repository: plants,
    writeCircuit,
    client,
    request,
    counted,
    metrics,
  };
}

/** plantsOn a new, empty table, given back with them. */
export async function plantsInMemory(): Promise<
  { table: FakePlantsTable } & Awaited<ReturnType<typeof plantsOn>>
> {
  const table = new FakePlantsTable();
  return { table, ...(await plantsOn(table)) };
}

export const fern = (id: bigint, tag?: string): NewPlant =>
  ({ id, name: 'Fern', ...(tag === undefined ? {} : { tag }) }) as NewPlant;

export async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the create to fail');
    },
    (error: unknown) => error,
  );
}
