import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidOf } from '../../src/service/database/pid-files.js';
import { removeAbandoned } from '../../src/service/testing/abandoned-folders.js';

/** A new empty folder for each test of the describe it is called in, removed after it. */
export function useTempFolder(prefix: string): () => string {
  let folder: string | undefined;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    if (folder !== undefined)
      await rm(folder, { recursive: true, force: true });
  });
  return () => folder!;
}

/**
 * A folder of this process's own (`<prefix><pid>`) for the describe it is called in: made
 * before its first test, removed after its last; others may traverse it (PostgreSQL runs as
 * `postgres` under root). One that a process left when it was killed mid-run (Stryker ends a
 * worker on a timeout) is removed first. They live in a folder of their own in the temporary
 * directory: the sweep is the test kit's removeAbandoned, which Stryker mutates while this
 * runs, so it only ever looks there.
 */
export function useProcessFolder(prefix: string): () => string {
  const parent = join(tmpdir(), 'plant-store-spec-folders');
  const folder = join(parent, `${prefix}${process.pid}`);
  beforeAll(async () => {
    await mkdir(parent, { recursive: true, mode: 0o711 });
    await removeAbandoned(parent, prefix, {
      owners: (_, name) => [pidOf(name.slice(prefix.length))],
      unrecordedForMs: Number.POSITIVE_INFINITY,
    });
    await mkdir(folder);
    await chmod(folder, 0o711);
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));
  return () => folder;
}
