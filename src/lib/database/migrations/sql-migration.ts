import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaQualified } from '../schema-qualified.js';

/** One direction's statements, given the migration's tables and functions as the DataSource's schema names them. */
type Statements<Key extends string> = (named: Record<Key, string>) => string[];

/**
 * The migration class `name` (what TypeORM records, its timestamp last): its up and its down
 * send their statements in turn, each naming `objects` (a key for each table or function) in
 * the DataSource's schema.
 */
export function sqlMigration<Key extends string>(
  name: string,
  objects: Record<Key, string>,
  statements: { up: Statements<Key>; down: Statements<Key> },
): new () => MigrationInterface {
  async function send(
    queryRunner: QueryRunner,
    direction: Statements<Key>,
  ): Promise<void> {
    const named = Object.fromEntries(
      Object.entries<string>(objects).map(([key, object]) => [
        key,
        schemaQualified(queryRunner.connection, object),
      ]),
    ) as Record<Key, string>;
    for (const sql of direction(named)) await queryRunner.query(sql);
  }

  const Migration = class implements MigrationInterface {
    name = name;

    up(queryRunner: QueryRunner): Promise<void> {
      return send(queryRunner, statements.up);
    }

    down(queryRunner: QueryRunner): Promise<void> {
      return send(queryRunner, statements.down);
    }
  };
  // The class's own name as well, as a class declaration's: TypeORM falls back on it.
  Object.defineProperty(Migration, 'name', { value: name });
  return Migration;
}

/**
 * The migration class `name` that creates `table` with `columns` (a definition each) in the
 * DataSource's schema, and drops it on the way down.
 */
export function tableMigration(
  name: string,
  table: string,
  columns: readonly string[],
): new () => MigrationInterface {
  // Laid out as the first migrations sent it: their statements are pinned (migrations.spec.ts).
  const definitions = columns.map((column) => `        ${column}`).join(',\n');
  return sqlMigration(
    name,
    { table },
    {
      up: (named) => [
        `
      CREATE TABLE ${named.table} (
${definitions}
      )
    `,
      ],
      down: (named) => [`DROP TABLE ${named.table}`],
    },
  );
}
