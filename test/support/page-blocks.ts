import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A docs page's example files: each code block whose opening fence names a file
 * (```ts x.ts), by that name, as written.
 */
export async function pageFiles(page: string): Promise<Map<string, string>> {
  const text = await readFile(page, 'utf8');
  return new Map(
    [...text.matchAll(/```(?:ts|js|json) (\S+)\n([\s\S]*?)```/g)].map(
      ([, name, body]) => [name, body],
    ),
  );
}

/** The files `names` of `page` written into `directory` (made if missing), as written. */
export async function writePageFiles(
  page: string,
  directory: string,
  names: readonly string[],
): Promise<void> {
  const files = await pageFiles(page);
  await mkdir(directory, { recursive: true });
  for (const name of names) {
    const text = files.get(name);
    if (text === undefined) throw new Error(`${page} has no block for ${name}`);
    await writeFile(join(directory, name), text);
  }
}
