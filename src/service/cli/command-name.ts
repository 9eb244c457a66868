import { basename, relative } from 'node:path';

/** How the user ran this command, for its usage text: bin name, `npm run token --`, or `node <path>`. */
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
