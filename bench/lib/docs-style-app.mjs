// The docs-style app (bench/servers/docs-style-app.ts), the yardstick of "what a team would
// write instead": built here for the benchmark's rounds and for its own spec
// (test/docs-style-app.e2e-spec.ts).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH, RESULTS, ROOT } from './paths.mjs';

const SOURCES = join(BENCH, 'servers');
const OUT = join(RESULTS, 'servers');

/** The compiled app: `node DOCS_STYLE_APP`, HTTP_ADAPTER choosing express or fastify. */
export const DOCS_STYLE_APP = join(OUT, 'docs-style-app.js');

// The hash of the sources DOCS_STYLE_APP was compiled from, written once it was; and the
// lock of the one process compiling it (its pid inside).
const BUILT_FROM = join(OUT, '.docs-style-app.sources');
const LOCK = join(OUT, '.docs-style-app.lock');
const LOCK_WAIT_MS = 180_000;

/** Compiles the docs-style app (TypeScript, decorators) into bench/results/servers. */
export function buildDocsStyleApp() {
  mkdirSync(OUT, { recursive: true });
  // Until it is compiled again, the output is of no known sources.
  rmSync(BUILT_FROM, { force: true });
  execFileSync(
    join(ROOT, 'node_modules', '.bin', 'tsc'),
    ['-p', join(SOURCES, 'tsconfig.json')],
    { cwd: ROOT, stdio: ['ignore', 2, 2] },
  );
}

/**
 * What the compiled app depends on: the servers' TypeScript and tsconfig, the root tsconfig
 * it extends, and the installed packages (package-lock.json, TypeScript's among them).
 */
function sourcesHash() {
  const hash = createHash('sha256');
  const files = [
    ...readdirSync(SOURCES)
      .filter((name) => name.endsWith('.ts') || name === 'tsconfig.json')
      .sort()
      .map((name) => join(SOURCES, name)),
    join(ROOT, 'tsconfig.json'),
    join(ROOT, 'package-lock.json'),
  ];
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The hash of the sources the app was compiled from; undefined when unknown or missing. */
async function builtFrom() {
  const compiled = await stat(DOCS_STYLE_APP).catch(() => undefined);
  if (compiled === undefined) return undefined;
  return readFile(BUILT_FROM, 'utf8').catch(() => undefined);
}

/**
 * True when the process whose pid the lock holds is gone, or the lock has had no pid for
 * seconds (its process died between creating it and writing its pid).
 */
async function lockIsStale() {
  const text = await readFile(LOCK, 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  const pid = Number(text);
  if (text === '' || !Number.isInteger(pid) || pid <= 0) {
    const since = await stat(LOCK).then(
      ({ mtimeMs }) => mtimeMs,
      () => Date.now(),
    );
    return Date.now() - since > 10_000;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return error.code === 'ESRCH';
  }
}

/**
 * Compiles the docs-style app unless it is already compiled from the sources as they are
 * now, so that processes running side by side (the e2e and e2e-fastify projects' workers)
 * and runs one after another compile it once: one process compiles, holding a lock file,
 * while the others wait for it and then find it up to date. Resolves to whether this call
 * compiled it.
 */
export async function ensureDocsStyleApp() {
  mkdirSync(OUT, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const sources = sourcesHash();
    if ((await builtFrom()) === sources) return false;
    let lock;
    try {
      lock = await open(LOCK, 'wx');
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (await lockIsStale()) await rm(LOCK, { force: true });
      if (Date.now() > deadline)
        throw new Error(
          `The docs-style app is still being compiled by another process after ${LOCK_WAIT_MS} ms (${LOCK})`,
        );
      await sleep(200);
      continue;
    }
    try {
      await lock.writeFile(String(process.pid));
      await lock.close();
      // Another process may have compiled it between the check and the lock.
      if ((await builtFrom()) === sources) return false;
      buildDocsStyleApp();
      await writeFile(BUILT_FROM, sources);
      return true;
    } finally {
      await rm(LOCK, { force: true });
    }
  }
}
