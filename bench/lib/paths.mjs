// Where things are: the benchmark's folders, the built service, the reference servers and
// the preloads. The one place that knows bench/'s layout (bench/README.md shows it).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/ */
export const BENCH = dirname(dirname(fileURLToPath(import.meta.url)));
/** The repository: its package.json, dist/ and node_modules/. */
export const ROOT = dirname(BENCH);
/** Logs, profiles and raw figures of the last runs (not committed). */
export const RESULTS = join(BENCH, 'results');
/**
 * The service's entry point in a build folder: dist/service/main.js, or dist/main.js in a
 * build from before the package and the service had folders of their own (issue 34), so
 * that `--versus` can still run one.
 */
export function serviceMainOf(dist) {
  const main = join(dist, 'service', 'main.js');
  return existsSync(main) ? main : join(dist, 'main.js');
}
/** The built service, as `npm run start:prod` runs it. */
export const SERVICE_MAIN = join(ROOT, 'dist', 'service', 'main.js');
export const BASELINE_SERVER = join(BENCH, 'servers', 'baseline-server.mjs');
export const BARE_REFUSAL_SERVER = join(
  BENCH,
  'servers',
  'bare-refusal-server.mjs',
);
export const MEMORY_SPLIT_PRELOAD = join(BENCH, 'preload', 'memory-split.mjs');
export const HEAP_SAMPLER_PRELOAD = join(BENCH, 'preload', 'heap-sampler.mjs');
