import { randomBytes } from 'node:crypto';
import {
  chmod,
  mkdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { EMBEDDED_DATABASE_NAME } from '../database/embedded-database-url.js';
import { OWNER_FILE } from '../database/stale-postmaster.js';
import { freePort } from './free-port.js';
import { pidIn } from '../database/pid-files.js';
import { isAbandoned } from './abandoned-folders.js';

/** Bumped when what a template holds changes: older ones are then left unused. */
const TEMPLATE_FORMAT = 2;
/** Beside the cluster (embedded-postgres.ts's layout): its folder and its password file. */
export const CLUSTER_FOLDER = 'postgres';
export const PASSWORD_FILE = 'postgres-password';
/** A template being built: its builder's pid follows, so a dead builder's can be removed. */
export const BUILDING_PREFIX = 'building-';

/** initdb and a first start on a loaded 2-core machine: seconds; this is for a crowded one. */
const BUILD_DEADLINE_MS = 180_000;
/** A lock folder with no pid in it for this long was left by a process killed at once. */
const LOCK_EMPTY_MS = 10_000;

/** The system's temporary directory's `plant-store-cache-<uid>`: per user, beside the stores. */
export function defaultCacheDir(): string {
  return join(tmpdir(), `plant-store-cache-${userInfo().uid}`);
}

/** The embedded binaries' package version, read beside them (its exports hide package.json). */
async function postgresVersion(): Promise<string> {
  const { postgres } = (await import(
    `@embedded-postgres/${platform()}-${arch()}`
  )) as { postgres: string };
  // <package>/native/bin/postgres
  const manifest = join(dirname(dirname(dirname(postgres))), 'package.json');
  return (JSON.parse(await readFile(manifest, 'utf8')) as { version: string })
    .version;
}

/** Makes the cache folder, traversable by others (PostgreSQL runs as `postgres` under root). */
export async function makeCacheDir(cacheDir: string): Promise<void> {
  await mkdir(cacheDir, { recursive: true, mode: 0o711 });
  if (userInfo().uid === 0) {
    const { mode } = await stat(cacheDir);
    await chmod(cacheDir, (mode & 0o7777) | 0o001);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** `postgres` and `template0`, which no store uses: 300 files each of a copy's 1,300. */
async function dropUnusedDatabases(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('DROP DATABASE postgres');
    await client.query('ALTER DATABASE template0 IS_TEMPLATE false');
    await client.query('DROP DATABASE template0');
  } finally {
    await client.end();
  }
}

async function buildTemplate(
  cacheDir: string,
  template: string,
): Promise<void> {
  const building = join(
    cacheDir,
    `${BUILDING_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  try {
    const { EmbeddedPostgresServer } =
      await import('../database/embedded-postgres.js');
    const server = await EmbeddedPostgresServer.start({
      dataDir: building,
      port: await freePort(),
      database: EMBEDDED_DATABASE_NAME,
      onLog: () => {},
    });
    await dropUnusedDatabases(server.url);
    // A fast shutdown leaves a clean cluster: no recovery when a copy starts.
    await server.stop();
    await rm(join(building, OWNER_FILE), { force: true });
    // Atomic: a store never copies half a template.
    await rename(building, template);
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/** The lock's holder, written into it: a lock whose holder is gone is taken over. */
async function lockIsStale(lock: string): Promise<boolean> {
  return isAbandoned(lock, [await pidIn(join(lock, 'pid'))], LOCK_EMPTY_MS);
}

/** The cluster every store copies, built once per machine and PostgreSQL version by one process while others wait. */
export async function templateCluster(cacheDir: string): Promise<string> {
  const template = join(
    cacheDir,
    `postgres-${await postgresVersion()}-v${TEMPLATE_FORMAT}`,
  );
  const lock = `${template}.lock`;
  const deadline = Date.now() + BUILD_DEADLINE_MS;
  while (!(await exists(join(template, CLUSTER_FOLDER, 'PG_VERSION')))) {
    const locked = await mkdir(lock).then(
      () => true,
      () => false,
    );
    if (locked) {
      try {
        await writeFile(join(lock, 'pid'), `${process.pid}\n`);
        if (!(await exists(template))) await buildTemplate(cacheDir, template);
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
    } else if (await lockIsStale(lock)) {
      await rm(lock, { recursive: true, force: true });
    } else {
      if (Date.now() > deadline)
        throw new Error(
          `No template cluster in ${cacheDir} after ${BUILD_DEADLINE_MS / 1000} s: ` +
            `is another process stuck building it? Remove ${lock} to build anew.`,
        );
      await sleep(100);
    }
  }
  return template;
}
