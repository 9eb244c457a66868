import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedDatabaseUrl } from '../database/embedded-database-url.js';
import { KeeperProcess } from './database-keeper-process.js';
import { freePort } from './free-port.js';
import { STORE_PREFIX } from './store-folder.js';
import {
  defaultCacheDir,
  makeCacheDir,
  PASSWORD_FILE,
  templateCluster,
} from './template-cluster.js';

export interface SharedPostgres {
  /** Its own `plant_store` database, left empty: startPlantStore({ sharedPostgres }) makes each store's beside it. */
  url: string;
  /** Stops the server and removes its folder, every store's database with it. */
  stop(): Promise<void>;
}

/** One PostgreSQL for a whole run (a global setup), a database per store, stopped by a keeper. */
export async function startSharedPostgres(
  options: { cacheDir?: string } = {},
): Promise<SharedPostgres> {
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  await makeCacheDir(cacheDir);
  const template = await templateCluster(cacheDir);
  const password = (
    await readFile(join(template, PASSWORD_FILE), 'utf8')
  ).trim();
  const dataDir = await mkdtemp(join(tmpdir(), STORE_PREFIX));
  const port = await freePort();
  const keeper = new KeeperProcess({ template, dataDir, port });
  // The keeper does not hold the runner open; this wait must.
  const holding = setInterval(() => {}, 1_000);
  try {
    await keeper.ready;
  } catch (error) {
    await keeper.stop();
    throw error;
  } finally {
    clearInterval(holding);
  }
  return {
    url: embeddedDatabaseUrl(password, port),
    stop: () => keeper.stop(),
  };
}
