import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
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
  const text = await readFile(
    join(clusterOf(dataDir), 'postmaster.pid'),
    'utf8',
  ).catch(() => '');
  const pid = Number.parseInt(text.split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
