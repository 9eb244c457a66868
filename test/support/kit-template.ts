import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CLUSTER_FOLDER,
  defaultCacheDir,
  makeCacheDir,
  PASSWORD_FILE,
  templateCluster,
} from '../../src/service/testing/template-cluster.js';

/** The test kit's template cluster on this machine, as startPlantStore finds it: built once, then reused. */
export async function kitTemplate(): Promise<string> {
  const cacheDir = defaultCacheDir();
  await makeCacheDir(cacheDir);
  return templateCluster(cacheDir);
}

/**
 * A template at `folder` as the kit finds one (its cluster's PG_VERSION, its password), but
 * whose cluster PostgreSQL refuses to start: it holds no configuration.
 */
export async function templateWithoutConfiguration(
  folder: string,
): Promise<void> {
  await mkdir(join(folder, CLUSTER_FOLDER), { recursive: true });
  await writeFile(join(folder, CLUSTER_FOLDER, 'PG_VERSION'), '18\n');
  await writeFile(join(folder, PASSWORD_FILE), 'secret\n');
}
