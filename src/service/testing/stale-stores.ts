import { readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  OWNER_FILE as POSTGRES_OWNER_FILE,
  stopStalePostmaster,
} from '../database/stale-postmaster.js';
import { isAlive, pidIn } from '../database/pid-files.js';
import { processTree, signalEach } from './process-tree.js';
import {
  clusterOf,
  KEEPER_PID_FILE,
  postmasterPid,
  STORE_PREFIX,
} from './store-folder.js';
import { BUILDING_PREFIX } from './template-cluster.js';

/** A folder with no keeper recorded after this long was left by a start that died early. */
const ORPHAN_AGE_MS = 10 * 60_000;

/** Stale: every process recorded in it is gone, or none was recorded for a long time. */
async function isStale(folder: string): Promise<boolean> {
  const owners = (
    await Promise.all(
      [KEEPER_PID_FILE, POSTGRES_OWNER_FILE].map((file) =>
        pidIn(join(folder, file)),
      ),
    )
  ).filter((pid) => pid !== undefined);
  if (owners.length > 0) return !owners.some(isAlive);
  const info = await stat(folder).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > ORPHAN_AGE_MS;
}

/** Its postmaster stopped (continued first, if a fault had paused it), then the folder gone. */
async function remove(folder: string): Promise<void> {
  const postmaster = await postmasterPid(folder);
  if (postmaster !== undefined) signalEach(processTree(postmaster), 'SIGCONT');
  await stopStalePostmaster(folder, clusterOf(folder)).catch(() => undefined);
  await rm(folder, { recursive: true, force: true });
}

/** Removes what killed runs left (store folders and templates whose owner is gone); never what is in use. */
export async function removeStaleStores(cacheDir: string): Promise<void> {
  const stores = (await readdir(tmpdir()).catch(() => []))
    .filter((name) => name.startsWith(STORE_PREFIX))
    .map((name) => join(tmpdir(), name));
  const builds = (await readdir(cacheDir).catch(() => []))
    .filter((name) => name.startsWith(BUILDING_PREFIX))
    .map((name) => join(cacheDir, name));
  for (const folder of [...stores, ...builds])
    if (await isStale(folder)) await remove(folder);
}
