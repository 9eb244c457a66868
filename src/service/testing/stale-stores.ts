import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  OWNER_FILE as POSTGRES_OWNER_FILE,
  stopStalePostmaster,
} from '../database/stale-postmaster.js';
import { pidIn } from '../database/pid-files.js';
import { removeAbandoned, type Sweep } from './abandoned-folders.js';
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

/** Its postmaster stopped (continued first, if a fault had paused it), then the folder gone. */
async function remove(folder: string): Promise<void> {
  const postmaster = await postmasterPid(folder);
  if (postmaster !== undefined) signalEach(processTree(postmaster), 'SIGCONT');
  await stopStalePostmaster(folder, clusterOf(folder)).catch(() => undefined);
  await rm(folder, { recursive: true, force: true });
}

/** Removes what killed runs left (store folders and templates whose owner is gone); never what is in use. */
export async function removeStaleStores(cacheDir: string): Promise<void> {
  const stale: Sweep = {
    owners: (folder) =>
      Promise.all(
        [KEEPER_PID_FILE, POSTGRES_OWNER_FILE].map((file) =>
          pidIn(join(folder, file)),
        ),
      ),
    unrecordedForMs: ORPHAN_AGE_MS,
    remove,
  };
  await removeAbandoned(tmpdir(), STORE_PREFIX, stale);
  await removeAbandoned(cacheDir, BUILDING_PREFIX, stale);
}
