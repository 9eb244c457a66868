import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import {
  CLUSTER_FOLDER,
  defaultCacheDir,
  makeCacheDir,
  PASSWORD_FILE,
  templateCluster,
} from '../../src/service/testing/template-cluster.js';
import { copyTree } from '../../src/service/testing/tree-copy.js';

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

/**
 * A copy of the kit's template in `dataDir` as the embedded PostgreSQL keeps its cluster
 * there (the cluster folder and its password): an existing one, which spares initdb's seconds.
 */
export async function copyOfKitCluster(dataDir: string): Promise<void> {
  const template = await kitTemplate();
  await copyTree(join(template, CLUSTER_FOLDER), join(dataDir, CLUSTER_FOLDER))
    .done;
  await copyFile(join(template, PASSWORD_FILE), join(dataDir, PASSWORD_FILE));
}

/**
 * The kit's template in `folder` too, its files hard links to the machine's (`cp -al`: none
 * of its 32 MB copied), for a spec whose spares or cache must be its own. Nothing writes a
 * template's files: every store and every spare is a copy (`cp -a`). Its path.
 */
export async function linkedKitTemplate(folder: string): Promise<string> {
  const template = await kitTemplate();
  const linked = join(folder, basename(template));
  await promisify(execFile)('cp', ['-al', template, linked]);
  return linked;
}
