import pg from 'pg';

let created = 0;

/** A new, empty database on the same server as `baseUrl`, for a test that needs its own. */
export async function createScratchDatabase(
  baseUrl: string,
  label: string,
): Promise<string> {
  created += 1;
  const name = `plant_store_${label}_${process.pid}_${created}_test`;
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
