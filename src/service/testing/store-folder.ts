import { join } from 'node:path';
import { pidIn } from '../database/pid-files.js';
import { CLUSTER_FOLDER } from './template-cluster.js';

/** A store's folder in the temporary directory: its cluster and its keeper's pid. */
export const STORE_PREFIX = 'plant-store-test-';
export const KEEPER_PID_FILE = 'keeper.pid';

export function clusterOf(dataDir: string): string {
  return join(dataDir, CLUSTER_FOLDER);
}

/** The postmaster's pid (its backends are its children), while it runs. */
export async function postmasterPid(
  dataDir: string,
): Promise<number | undefined> {
  return pidIn(join(clusterOf(dataDir), 'postmaster.pid'));
}
