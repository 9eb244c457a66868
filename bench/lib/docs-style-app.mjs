// The docs-style app (bench/servers/docs-style-app.ts), the yardstick of "what a team would
// write instead": built here for the benchmark's rounds and for its own spec
// (test/docs-style-app.e2e-spec.ts).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCH, RESULTS, ROOT } from './paths.mjs';

/** The compiled app: `node DOCS_STYLE_APP`, HTTP_ADAPTER choosing express or fastify. */
export const DOCS_STYLE_APP = join(RESULTS, 'servers', 'docs-style-app.js');

/** Compiles the docs-style app (TypeScript, decorators) into bench/results/servers. */
export function buildDocsStyleApp() {
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-p', join(BENCH, 'servers', 'tsconfig.json')],
    { cwd: ROOT, stdio: ['ignore', 2, 2] },
  );
}
