import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A random secret made once, kept in a 0600 file across restarts: `prefix` + base64url bytes. */
export async function readOrCreateSecretFile(
  path: string,
  { bytes, prefix = '' }: { bytes: number; prefix?: string },
): Promise<string> {
  const stored = await readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (stored.length > 0) return stored;
  const secret = `${prefix}${randomBytes(bytes).toString('base64url')}`;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  return secret;
}
