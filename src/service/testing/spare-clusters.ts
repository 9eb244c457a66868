// Copies of the template made ahead of the starts that rename them into place
// (docs/testing-against-plant-store.md#fast-starts-the-template-cluster-in-the-cache-folder).
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pidOf } from '../database/pid-files.js';
import { removeAbandoned } from './abandoned-folders.js';
import { CLUSTER_FOLDER } from './template-cluster.js';
import { copyTree } from './tree-copy.js';

/** As many as a runner's usual workers start at once (the testing page's recipes: four). */
export const SPARES_KEPT = 4;
const READY_PREFIX = 'ready-';
/** A copy being made: its keeper's pid follows, so a dead keeper's can be removed. */
const COPYING_PREFIX = 'copying-';

/** Beside the template, so that a new template format leaves the old spares unused with it. */
export function sparesOf(template: string): string {
  return `${template}-spares`;
}

/** Moves a ready spare to `cluster`; false when there is none or it cannot (another file system). */
export async function claimSpare(
  template: string,
  cluster: string,
): Promise<boolean> {
  const folder = sparesOf(template);
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names.filter((entry) => entry.startsWith(READY_PREFIX))) {
    try {
      await rename(join(folder, name), cluster);
      return true;
    } catch (error) {
      // Taken by another start in the meantime: the next one, if any.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
  }
  return false;
}

/** One spare being copied, in the background. */
export class SpareCopy {
  private constructor(
    private readonly child: ChildProcess,
    readonly done: Promise<void>,
  ) {}

  /** A copy when fewer than SPARES_KEPT are ready or being made; undefined otherwise. */
  static async begin(template: string): Promise<SpareCopy | undefined> {
    const folder = sparesOf(template);
    await mkdir(folder, { recursive: true, mode: 0o711 });
    await removeAbandoned(folder, COPYING_PREFIX, {
      owners: (_, name) => [pidOf(name.slice(COPYING_PREFIX.length))],
      unrecordedForMs: Number.POSITIVE_INFINITY,
    });
    if ((await readdir(folder)).length >= SPARES_KEPT) return undefined;
    const id = `${process.pid}-${randomBytes(4).toString('hex')}`;
    const copying = join(folder, `${COPYING_PREFIX}${id}`);
    const copy = copyTree(join(template, CLUSTER_FOLDER), copying, {
      background: true,
    });
    const done = copy.done
      .then(
        () => rename(copying, join(folder, `${READY_PREFIX}${id}`)),
        () => rm(copying, { recursive: true, force: true }),
      )
      // A spare is the cache's: one not made (no `nice`, the folder removed) costs a copy later.
      .catch(() => undefined);
    return new SpareCopy(copy.child, done);
  }

  /** Lets a copy being made finish, for at most `deadlineMs`; cancels it past that. */
  async finish(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), deadlineMs);
    });
    const outcome = await Promise.race([this.done, late]);
    clearTimeout(timer);
    if (outcome === 'late') await this.cancel();
  }

  /** Stops a copy still being made; `done` then removes what it wrote. */
  async cancel(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null)
      this.child.kill('SIGKILL');
    await this.done;
  }
}
