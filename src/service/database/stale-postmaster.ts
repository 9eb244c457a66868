import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, pidIn } from './pid-files.js';

/** Written beside the cluster: the process that started its postmaster and stops it. */
export const OWNER_FILE = 'postgres-owner.pid';
/** A fast shutdown takes well under a second on a test's cluster; this is for a loaded machine. */
const STOP_DEADLINE_MS = 15_000;

/** The postmaster named by the cluster's postmaster.pid, if that process still runs. */
async function runningPostmaster(
  clusterDir: string,
): Promise<number | undefined> {
  const pid = await pidIn(join(clusterDir, 'postmaster.pid'));
  if (pid === undefined || !isAlive(pid)) return undefined;
  // After a reboot or a crash the number may belong to another program by now.
  const command = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(
    () => 'postgres',
  );
  return command.includes('postgres') ? pid : undefined;
}

/** Records this process as the one that runs, and will stop, the cluster's postmaster. */
export async function recordPostmasterOwner(dataDir: string): Promise<void> {
  await writeFile(join(dataDir, OWNER_FILE), `${process.pid}\n`);
}

/** Stops a postmaster whose starter is gone (it holds the port); a sentence to log, if it did. */
export async function stopStalePostmaster(
  dataDir: string,
  clusterDir: string,
): Promise<string | undefined> {
  const postmaster = await runningPostmaster(clusterDir);
  if (postmaster === undefined) return undefined;
  const owner = await pidIn(join(dataDir, OWNER_FILE));
  // Its owner may be this very process (a test's server it restarts) or another running one.
  if (owner !== undefined && isAlive(owner)) return undefined;
  process.kill(postmaster, 'SIGINT');
  const deadline = Date.now() + STOP_DEADLINE_MS;
  while (isAlive(postmaster)) {
    if (Date.now() > deadline)
      throw new Error(
        `A stale embedded PostgreSQL (pid ${postmaster}) in ${clusterDir} did not stop ` +
          `within ${STOP_DEADLINE_MS / 1000} s of SIGINT: stop it, or set DATA_DIR elsewhere.`,
      );
    await sleep(50);
  }
  return (
    `Stopped a stale embedded PostgreSQL (pid ${postmaster}) left running in ${clusterDir} ` +
    `by a process that is gone (${owner === undefined ? 'no owner recorded' : `pid ${owner}`})`
  );
}
