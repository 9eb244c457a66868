import type { DataSource } from 'typeorm';

export interface StoredPlant {
  id: string;
  name: string;
  tag: string | null;
}

/** Reads a row straight from PostgreSQL, the id as text so no digit can be lost. */
export async function storedPlant(
  dataSource: DataSource,
  id: bigint,
): Promise<StoredPlant | undefined> {
  const rows = (await dataSource.query(
    'SELECT id::text AS id, name, tag FROM plants WHERE id = $1::bigint',
    [id.toString()],
  )) as StoredPlant[];
  return rows[0];
}

export async function countPlants(
  dataSource: DataSource,
  id: bigint,
): Promise<number> {
  const [{ count }] = (await dataSource.query(
    'SELECT count(*)::int AS count FROM plants WHERE id = $1::bigint',
    [id.toString()],
  )) as [{ count: number }];
  return count;
}
