import { MetricsService } from '../metrics/metrics.service.js';
import type { EntityMetadata, Repository } from 'typeorm';
import { createHash } from 'node:crypto';
import {
  type NamedStatement,
  poolOf,
  queryWithin,
} from '../database/bounded-query.js';
import { DatabaseDownError } from '../database/database-errors.js';
import { WriteCircuit } from '../database/write-circuit.js';
import {
  type InsertOutcome,
  type InsertRequest,
  PlantInsertBatcher,
  type PlantRow,
} from './plant-insert.batcher.js';
import { PlantEntity } from './plant.entity.js';
import { PlantsSettings } from './plants-module.options.js';

export type { InsertOutcome, InsertRequest, PlantRow };

interface PlantStatements {
  insertBatch: NamedStatement;
  insertOne: NamedStatement;
  selectById: NamedStatement;
}

/** Named by its text, so that two tables (two schemas) never share a name on a connection. */
function named(text: string): NamedStatement {
  const digest = createHash('sha256').update(text).digest('hex');
  return { name: `plant-store-${digest.slice(0, 24)}`, text };
}

/**
 * Names and types from the entity's metadata; one text for any batch size (unnest), a lone row as
 * a one-row INSERT ... VALUES (docs/performance.md#what-bought-the-most-and-where-it-is-measured).
 */
function statementsFor(metadata: EntityMetadata): PlantStatements {
  const { driver } = metadata.connection;
  const escape = (identifier: string) => driver.escape(identifier);
  const table = metadata.tablePath.split('.').map(escape).join('.');
  const column = (property: keyof PlantRow) => {
    const found = metadata.findColumnWithPropertyName(property);
    if (found === undefined) throw new Error(`No column for ${property}`);
    return { name: escape(found.databaseName), type: String(found.type) };
  };
  const [id, name, tag] = [column('id'), column('name'), column('tag')];
  return {
    insertBatch: named(`
      INSERT INTO ${table} (${id.name}, ${name.name}, ${tag.name})
      SELECT * FROM unnest($1::${id.type}[], $2::${name.type}[], $3::${tag.type}[])
      ON CONFLICT (${id.name}) DO NOTHING
      RETURNING ${id.name}::text AS id`),
    insertOne: named(`
      INSERT INTO ${table} (${id.name}, ${name.name}, ${tag.name})
      VALUES ($1::${id.type}, $2::${name.type}, $3::${tag.type})
      ON CONFLICT (${id.name}) DO NOTHING
      RETURNING ${id.name}::text AS id`),
    selectById: named(`
      SELECT ${id.name}::text AS id, ${name.name} AS name, ${tag.name} AS tag
      FROM ${table} WHERE ${id.name} = $1::${id.type}`),
  };
}

/** The one owner of the `plants` table: a statement past its deadline may still commit, which a retry replays. */
export class PlantsRepository {
  private statementsOfEntity: PlantStatements | undefined;
  private readonly batcher: PlantInsertBatcher;

  /** Reads no entity metadata before the first statement: a host's test may never initialize the DataSource. */
  constructor(
    private readonly plants: Repository<PlantEntity>,
    settings: PlantsSettings,
    metrics: MetricsService,
    private readonly writeCircuit: WriteCircuit,
  ) {
    const batcher = new PlantInsertBatcher(
      (rows, deadline) => this.insertRows(rows, deadline),
      {
        maxRows: settings.insertQueueLimit,
        maxWaitMs: settings.insertQueueWaitMs,
      },
    );
    this.batcher = batcher;
    metrics.gauge(
      'plant_insert_statements_in_flight',
      'Grouped INSERT statements sent and not yet answered',
      () => batcher.statementsInFlight,
    );
    metrics.gauge(
      'plant_insert_rows_waiting',
      'Rows in the insert queue, waiting for a statement slot (shed past INSERT_QUEUE_LIMIT or INSERT_QUEUE_WAIT_MS)',
      () => batcher.rowsWaiting,
    );
  }

  /** Writes the row unless its id is taken, sharing a statement; refused while the circuit is down. */
  insertOrSkip(request: InsertRequest): Promise<InsertOutcome> {
    if (!this.writeCircuit.canCommit)
      return Promise.reject(new DatabaseDownError());
    return this.batcher.insert(request);
  }

  /** True while new inserts would be shed: a create can be refused before any work. */
  get isOverloaded(): boolean {
    return this.batcher.isOverloaded;
  }

  async findById(id: string, deadline: number): Promise<PlantRow | undefined> {
    const [row] = await queryWithin<PlantRow>(
      poolOf(this.plants.manager.connection),
      deadline,
      this.statements.selectById,
      [id],
    );
    return row;
  }

  private get statements(): PlantStatements {
    this.statementsOfEntity ??= statementsFor(this.plants.metadata);
    return this.statementsOfEntity;
  }

  private async insertRows(
    rows: PlantRow[],
    deadline: number,
  ): Promise<Set<string>> {
    const returned = await this.writeCircuit.write((signal) => {
      // The pool first: a DataSource not connected yet has no entity metadata either.
      const pool = poolOf(this.plants.manager.connection);
      const [sql, parameters] =
        rows.length === 1
          ? [this.statements.insertOne, [rows[0].id, rows[0].name, rows[0].tag]]
          : [
              this.statements.insertBatch,
              [
                rows.map((row) => row.id),
                rows.map((row) => row.name),
                rows.map((row) => row.tag),
              ],
            ];
      return queryWithin<{ id: string }>(
        pool,
        deadline,
        sql,
        parameters,
        signal,
      );
    });
    return new Set(returned.map((row) => row.id));
  }
}
