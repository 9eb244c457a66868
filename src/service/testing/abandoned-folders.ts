import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive } from '../database/pid-files.js';

type Pids = readonly (number | undefined)[];

/**
 * Whether whoever made `folder` is gone: every pid recorded has ended, or, none recorded, the
 * folder is older than `unrecordedForMs` (its maker died before it could write one).
 */
export async function isAbandoned(
  folder: string,
  recorded: Pids,
  unrecordedForMs: number,
): Promise<boolean> {
  const pids = recorded.filter((pid) => pid !== undefined);
  if (pids.length > 0) return !pids.some(isAlive);
  const info = await stat(folder).catch(() => undefined);
  return info !== undefined && Date.now() - info.mtimeMs > unrecordedForMs;
}

export interface Sweep {
  /** The pids `folder` records, in its name or in files in it. */
  owners: (folder: string, name: string) => Pids | Promise<Pids>;
  unrecordedForMs: number;
  remove?: (folder: string) => Promise<void>;
}

const removeTree = (folder: string): Promise<void> =>
  rm(folder, { recursive: true, force: true });

/** Removes the abandoned folders of `parent` whose names start with `prefix`. */
export async function removeAbandoned(
  parent: string,
  prefix: string,
  { owners, unrecordedForMs, remove = removeTree }: Sweep,
): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names.filter((entry) => entry.startsWith(prefix))) {
    const folder = join(parent, name);
    if (await isAbandoned(folder, await owners(folder, name), unrecordedForMs))
      await remove(folder);
  }
}
