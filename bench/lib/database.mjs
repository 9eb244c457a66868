// The database every scenario runs on: DATABASE_URL, or an embedded PostgreSQL started
// here with the project's own class (from the build, since the source is TypeScript).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { freePort } from '../../test-kit/free-port.mjs';
import { ROOT } from './paths.mjs';
import { PRELOAD_STRIDE } from './workload.mjs';

/**
 * A new directory for an embedded cluster. mkdtemp makes it 0700, but run as root the
 * embedded PostgreSQL runs as the postgres user, which must be able to enter it.
 */
export async function dataDirectory(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  return dir;
}

/**
 * Opens the database. An external one must be named for benchmarks or tests: every
 * scenario empties the plants table, which must never happen to real data by accident.
 */
export async function openDatabase(log) {
  const external = process.env.DATABASE_URL;
  if (external !== undefined && external !== '') {
    const name = decodeURIComponent(new URL(external).pathname.slice(1));
    if (!/bench|test/i.test(name))
      throw new Error(
        `Refusing to run on database "${name}": the benchmark empties its plants table, ` +
          'so its name must contain "bench" or "test".',
      );
    return { url: external, embedded: false, async close() {} };
  }
  const dataDir = await dataDirectory('plant-store-bench-');
  const port = await freePort();
  const module = await import(
    pathToFileURL(join(ROOT, 'dist/service/database/embedded-postgres.js')).href
  );
  log(`starting the embedded PostgreSQL in ${dataDir} on port ${port}`);
  const server = await module.EmbeddedPostgresServer.start({
    dataDir,
    port,
    database: 'plant_store_bench',
    onLog: () => {},
  }).catch(async (error) => {
    // Nothing else will clean up a cluster that never started.
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    url: server.url,
    embedded: true,
    dataDir,
    async close() {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A small pool for the harness's own queries (resets, checks), apart from the servers'. */
export function harnessPool(url) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return pool;
}

export async function serverVersion(pool) {
  const { rows } = await pool.query('SELECT version() AS version');
  return rows[0].version;
}

export async function tableExists(pool) {
  const { rows } = await pool.query(
    "SELECT to_regclass('plants') IS NOT NULL AS exists",
  );
  return rows[0].exists;
}

/** A fresh, empty plants table (TRUNCATE gives it new files, so no dead rows remain). */
export async function emptyTable(pool) {
  await pool.query('TRUNCATE plants');
  await pool.query('VACUUM ANALYZE plants');
  await checkpoint(pool);
}

export async function countRows(pool) {
  const { rows } = await pool.query('SELECT count(*)::bigint AS n FROM plants');
  return Number(rows[0].n);
}

/**
 * Fills plants up to `total` preloaded rows (ids PRELOAD_STRIDE * g, never a load id),
 * adding to what an earlier preload left, then VACUUM ANALYZE as after a bulk load.
 */
export async function preload(pool, from, total) {
  await pool.query(
    `INSERT INTO plants (id, name, tag)
       SELECT g * $3::bigint, 'plant ' || g, CASE WHEN g % 2 = 0 THEN 'tag' END
       FROM generate_series($1::bigint, $2::bigint) AS g`,
    [from, total, PRELOAD_STRIDE.toString()],
  );
  await pool.query('VACUUM ANALYZE plants');
  await checkpoint(pool);
}

/** How many of these ids have a row (the ids of 200 answers must all have one). */
export async function countPresent(pool, ids) {
  let present = 0;
  for (let i = 0; i < ids.length; i += 20_000) {
    const { rows } = await pool.query(
      'SELECT count(*)::bigint AS n FROM plants WHERE id = ANY($1::bigint[])',
      [ids.slice(i, i + 20_000)],
    );
    present += Number(rows[0].n);
  }
  return present;
}

/** Size of the plants table with its index, for the report. */
export async function tableSize(pool) {
  const { rows } = await pool.query(
    "SELECT pg_size_pretty(pg_total_relation_size('plants')) AS size",
  );
  return rows[0].size;
}

/**
 * Waits until no server connection is running a statement, twice in a row 100 ms apart,
 * so that requests still in flight when a load generator stopped have written their row
 * (or not) before the rows are counted.
 */
export async function waitForQuiet(pool, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let quietChecks = 0;
  while (quietChecks < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name LIKE 'plant-store%' AND state <> 'idle'`,
    );
    quietChecks = rows[0].n === 0 ? quietChecks + 1 : 0;
  }
}

/**
 * Starts the next scenario just after a checkpoint, so that none of them pays for one
 * left over from the last (and all pay the same full-page writes after it). Needs
 * superuser or pg_checkpoint; without, scenarios run as they come.
 */
export async function checkpoint(pool) {
  await pool.query('CHECKPOINT').catch(() => {});
}
