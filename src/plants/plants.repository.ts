import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityMetadata, Repository } from 'typeorm';
import {
  type InsertOutcome,
  PlantInsertBatcher,
  type PlantRow,
} from './plant-insert.batcher.js';
import { PlantEntity } from './plant.entity.js';

export type { InsertOutcome, PlantRow };

interface PlantStatements {
  insertBatch: string;
  selectById: string;
}

/**
 * The statements, with the table's and columns' names and types read from the entity's
 * metadata, so the entity is the one description of the table outside the migration
 * (a migration is a frozen record of the past, so it keeps its own text on purpose).
 * One statement text for any batch size, so PostgreSQL plans it alike each time. Rows
 * keep their order through unnest; a second row with an id already in the batch is
 * skipped like any taken id.
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
    insertBatch: `
      INSERT INTO ${table} (${id.name}, ${name.name}, ${tag.name})
      SELECT * FROM unnest($1::${id.type}[], $2::${name.type}[], $3::${tag.type}[])
      ON CONFLICT (${id.name}) DO NOTHING
      RETURNING ${id.name}::text AS id`,
    selectById: `
      SELECT ${id.name}::text AS id, ${name.name} AS name, ${tag.name} AS tag
      FROM ${table} WHERE ${id.name} = $1::${id.type}`,
  };
}

/**
 * The one owner of the `plants` table: its SQL, the grouping of concurrent inserts and the
 * handling of its database errors. PlantsService decides what an outcome means.
 */
@Injectable()
export class PlantsRepository {
  private readonly statements: PlantStatements;
  private readonly batcher: PlantInsertBatcher;

  constructor(
    @InjectRepository(PlantEntity)
    private readonly plants: Repository<PlantEntity>,
  ) {
    this.statements = statementsFor(plants.metadata);
    this.batcher = new PlantInsertBatcher((rows) => this.insertRows(rows));
  }

  /** Writes the row unless its id is taken; concurrent calls share one statement. */
  insertOrSkip(row: PlantRow): Promise<InsertOutcome> {
    return this.batcher.insert(row);
  }

  /** The stored row; plants are never deleted, so a taken id is always there to read. */
  async findById(id: string): Promise<PlantRow> {
    const [row] = (await this.plants.query(this.statements.selectById, [
      id,
    ])) as PlantRow[];
    if (row === undefined) throw new Error('A taken plant id has no row.');
    return row;
  }

  private async insertRows(rows: PlantRow[]): Promise<Set<string>> {
    const returned = (await this.plants.query(this.statements.insertBatch, [
      rows.map((row) => row.id),
      rows.map((row) => row.name),
      rows.map((row) => row.tag),
    ])) as { id: string }[];
    return new Set(returned.map((row) => row.id));
  }
}
