import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE = `${ROOT}src/`;

/**
 * What the test kit runs beside itself once built (the service bundle, the keeper script),
 * for its code run from src/ in a unit spec: a path into src/ that does not exist there is
 * read from dist/ (`npm run build`); any other argument is left as it is.
 */
export function builtCopy<T>(argument: T): T {
  if (
    typeof argument !== 'string' ||
    !argument.startsWith(SOURCE) ||
    existsSync(argument)
  )
    return argument;
  return `${ROOT}dist/${argument.slice(SOURCE.length)}` as T;
}
