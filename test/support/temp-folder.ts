import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
