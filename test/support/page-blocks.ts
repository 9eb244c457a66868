import { readFile } from 'node:fs/promises';

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
