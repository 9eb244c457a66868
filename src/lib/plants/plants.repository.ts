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
 * The statements, with the table's and columns' names and types read from the entity's
 * metadata, so the entity is the one description of the table outside the migration
 * (a migration is a frozen record of the past, so it keeps its own text on purpose).
 * One statement text for any batch size, so PostgreSQL plans it alike each time. Rows
 * keep their order through unnest (the batcher sorts them by id, so concurrent statements
 * take their locks in one order); a second row with an id already in the batch is skipped
 * like any taken id. A batch of one row (every create on a quiet service) goes as a plain
 * INSERT ... VALUES instead: the same outcome, without PostgreSQL building and unnesting
 * three arrays, which measurably lengthened a lone create (bench/RESULTS.md, issue 32).
 * Each statement is named (pg's prepared statements): PostgreSQL parses and plans it once
 * per pooled connection, not once per create, which shortened a lone create again.
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

/**
 * The one owner of the `plants` table: its SQL, the grouping of concurrent inserts and the
 * handling of its database errors. PlantsService decides what an outcome means. Every
 * statement ends by the caller's deadline (queryWithin), so a hung database costs a
 * request that long, never a hang; a statement that ran out of time may still commit
 * once the database wakes, which a retry of the same plant then replays.
 */
export class PlantsRepository {
  private statementsOfEntity: PlantStatements | undefined;
  private readonly batcher: PlantInsertBatcher;

  /**
   * Built by PlantsModule with the repository of its connection (its `dataSource`).
   * Nothing here reads the entity's metadata before the first statement, so a host's unit
   * test can compile the module on a DataSource it never initializes.
   */
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

  /**
   * Writes the row unless its id is taken; concurrent calls share one statement. Refused
   * at once while the database is known not to commit (WriteCircuit).
   */
  insertOrSkip(request: InsertRequest): Promise<InsertOutcome> {
    if (!this.writeCircuit.canCommit)
      return Promise.reject(new DatabaseDownError());
    return this.batcher.insert(request);
  }

  /** True while new inserts would be shed: a create can be refused before any work. */
  get isOverloaded(): boolean {
    return this.batcher.isOverloaded;
  }

  /** The stored row, if any: `id` is an int64 in decimal. */
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
