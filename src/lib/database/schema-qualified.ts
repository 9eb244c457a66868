import pg from 'pg';
import type { DataSource } from 'typeorm';

/** A package table or function in the DataSource's `schema`, or bare as the first migrations wrote it. */
export function schemaQualified(dataSource: DataSource, name: string): string {
  const { schema } = dataSource.options as { schema?: string };
  if (schema === undefined || schema === '') return name;
  return `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(name)}`;
}
