import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLUSTER_FOLDER } from './template-cluster.js';

/**
 * A store's folder (plant-store-test-* in the system's temporary directory): its cluster,
 * copied from the template, and the pid of the keeper that owns it, which lets the next
 * run tell a folder whose keeper was killed from one in use.
 */
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
