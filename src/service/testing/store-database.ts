import { randomBytes } from 'node:crypto';
import pg from 'pg';

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A store's own database on a shared server: created empty, dropped with its connections at stop. */
export async function createStoreDatabase(
  serverUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `plant_store_${randomBytes(6).toString('hex')}`;
  const identifier = pg.escapeIdentifier(name);
  await onServer(serverUrl, `CREATE DATABASE ${identifier}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      onServer(serverUrl, `DROP DATABASE IF EXISTS ${identifier} WITH (FORCE)`),
  };
}
