import pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * One of the package's tables or functions, named as its SQL must write it: in the
 * DataSource's `schema` (quoted) when it has one, so that a host keeping its tables in a
 * schema gets the package's there too, and its statements find them whatever the
 * connection's search_path; bare when it has none, which is how the first migrations were
 * written, so their SQL is unchanged for every database they have already run on.
 */
export function schemaQualified(dataSource: DataSource, name: string): string {
  const { schema } = dataSource.options as { schema?: string };
  if (schema === undefined || schema === '') return name;
  return `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`;
}
