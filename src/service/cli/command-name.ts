import { basename, relative } from 'node:path';

/**
 * How the user ran this command, for its usage text: the name of the bin it was run as
 * (`plant-store-token`, by npx or a host's script: npm links the bin under that name),
 * `npm run token --` for the service's own script, or `node <path>` for the file itself.
 */
export function commandName(
  script: string,
  lifecycleEvent: string | undefined,
  cwd: string,
): string {
  const name = basename(script);
  if (name !== 'token.js') return name;
  if (lifecycleEvent === 'token') return 'npm run token --';
  return `node ${relative(cwd, script)}`;
}
