// The built service (dist/service/main.js) as a few files, for plant-store/testing's starts.
// Loading 1,400 modules one file at a time was most of a later startPlantStore(): Node's
// resolution, package.json reads and stat calls, 0.4-0.6 s of a 1.1 s start on this
// project's machine (bench/RESULTS.md). Production keeps running dist/service/main.js.
//
//   node scripts/bundle-service.mjs      (after nest build; npm run build runs both)
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { SERVICE_BUNDLE_EXTERNALS } from './service-bundle-externals.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = `${root}dist/service-bundle`;
const externals = new RegExp(
  `^(${SERVICE_BUNDLE_EXTERNALS.map((name) => name.replaceAll('/', '\\/')).join('|')})(/|$)`,
);

await rm(out, { recursive: true, force: true });
await build({
  input: {
    main: `${root}dist/service/main.js`,
    // The tracing exporter's worker, started by the file name it has in dist/service
    // (worker-span-exporter.ts), beside the chunk that starts it.
    'span-export-worker': `${root}dist/service/tracing/span-export-worker.js`,
  },
  platform: 'node',
  // Node's own modules, and the packages left to Node (see the list's comment).
  external: (id) => id.startsWith('node:') || externals.test(id),
  // An import it cannot resolve would be left to Node at run time: said, not silent.
  logLevel: 'warn',
  output: {
    dir: out,
    format: 'esm',
    entryFileNames: ({ name }) =>
      name === 'span-export-worker' ? '[name].js' : '[name].mjs',
    chunkFileNames: '[name]-[hash].mjs',
    // The CommonJS packages inside call require() for Node's modules and optional ones.
    banner:
      "import { createRequire as __createRequire } from 'node:module';\n" +
      'const require = __createRequire(import.meta.url);',
  },
});
