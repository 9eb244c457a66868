import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readOrCreateSecretFile } from './secret-file.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';

describe('readOrCreateSecretFile', () => {
  const folder = useTempFolder('secret-file-');

  it('makes the secret once, in a 0600 file in a folder it creates, and reads the same one after', async () => {
    const path = join(folder(), 'nested', 'token');
    const made = await readOrCreateSecretFile(path, {
      bytes: 24,
      prefix: 'pst_',
    });
    // 24 bytes are 32 base64url characters.
    expect(made).toMatch(/^pst_[A-Za-z0-9_-]{32}$/);
    expect(await readFile(path, 'utf8')).toBe(`${made}\n`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(
      await readOrCreateSecretFile(path, { bytes: 24, prefix: 'pst_' }),
    ).toBe(made);
  });

  it('keeps a secret written by hand, trimmed, and makes a new one for an empty file', async () => {
    const path = join(folder(), 'password');
    await writeFile(path, '  chosen-by-hand \n');
    expect(await readOrCreateSecretFile(path, { bytes: 8 })).toBe(
      'chosen-by-hand',
    );
    await writeFile(path, ' \n');
    const made = await readOrCreateSecretFile(path, { bytes: 8 });
    expect(made).toMatch(/^[A-Za-z0-9_-]{11}$/);
  });

  it('makes a different secret in each new file', async () => {
    const [a, b] = await Promise.all(
      ['a', 'b'].map((name) =>
        readOrCreateSecretFile(join(folder(), name), { bytes: 16 }),
      ),
    );
    expect(a).not.toBe(b);
  });
});
