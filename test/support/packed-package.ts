import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The package as another team gets it: `npm pack` of the built project, installed in a
 * scratch project of theirs, and their code compiled against its types. One way to do it,
 * for every spec that checks what a host or a suite of another team does with the tarball.
 */

export const run = promisify(execFile);
export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const INSTALL_TIMEOUT_MS = 240_000;

export interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export async function manifestOf(directory: string): Promise<Manifest> {
  return JSON.parse(
    await readFile(join(directory, 'package.json'), 'utf8'),
  ) as Manifest;
}

/** Packages at the versions this project installed (npm's cache has them). */
export async function installedVersions(
  names: readonly string[],
): Promise<Record<string, string>> {
  return Object.fromEntries(
    await Promise.all(
      names.map(async (name) => [
        name,
        (await manifestOf(join(ROOT, 'node_modules', name))).version,
      ]),
    ),
  ) as Record<string, string>;
}

/**
 * Packs the built project into `folder` and installs it there, by name, in a project with
 * `dependencies` besides (and `manifest`'s other fields). Returns the tarball's file name.
 */
export async function installPackedPackage(
  folder: string,
  dependencies: Record<string, string>,
  manifest: Record<string, unknown> = {},
): Promise<string> {
  // The dist/ that `npm test` built, packed as it is: prepack's own `nest build` would
  // delete and rewrite dist/ under the specs running from it at the same time.
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', folder],
    { cwd: ROOT },
  );
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(
    join(folder, 'package.json'),
    JSON.stringify({
      name: 'shop',
      private: true,
      type: 'module',
      ...manifest,
      dependencies: { ...dependencies, 'plant-store': `file:./${filename}` },
    }),
  );
  // Packages come from npm's cache where this machine has them (npm ci filled it).
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: folder,
    timeout: INSTALL_TIMEOUT_MS,
  });
  return filename;
}

/**
 * Compiles `files` in `folder` with this project's TypeScript, strict, against the
 * installed packages' types; `emit: false` only type-checks.
 */
export async function compileTypeScript(
  folder: string,
  files: string[],
  { emit = true }: { emit?: boolean } = {},
): Promise<void> {
  await writeFile(
    join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        target: 'es2023',
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        skipLibCheck: true,
        outDir: 'out',
        noEmit: !emit,
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      files,
    }),
  );
  await run(process.execPath, [
    join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(folder, 'tsconfig.json'),
  ]);
}
