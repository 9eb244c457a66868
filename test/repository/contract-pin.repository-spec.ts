import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SHARED_SPEC_DIR } from '../support/spec.js';

const PINNED = ['plant-store.md', 'plant-store.openapi.yaml'];

async function readIfPresent(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
}

describe('the contract pinned in test/contract', () => {
  it.each(PINNED)(
    '%s is the shared specification, byte for byte, wherever that is beside the repository',
    async (file) => {
      const pinned = await readFile(join('test/contract', file), 'utf8');
      expect(pinned.length).toBeGreaterThan(0);
      // A clone with no ../shared (CI may clone anywhere) has only the pin to go by.
      const shared = await readIfPresent(join(SHARED_SPEC_DIR, file));
      if (shared !== undefined) expect(pinned).toBe(shared);
    },
  );
});
