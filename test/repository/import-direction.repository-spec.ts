import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

/**
 * The parts of src, top to bottom: a part may import only parts below it (docs/
 * architecture.md, "Two halves"). The service sits above the package, so nothing in the
 * package can reach the service. A new folder or top-level file must be placed here.
 */
const LAYERS: readonly string[] = [
  // The service's entry points.
  'service/main.ts',
  'service/bootstrap.ts',
  'service/cluster.ts',
  'service/cli',
  'service/testcontainers',
  'service/testing',
  // Its composition: createApp, the front door and each adapter's steps of it, the root
  // module.
  'service/app.setup.ts',
  'service/front-door.ts',
  'service/express-door.ts',
  'service/fastify-door.ts',
  'service/service-adapter.ts',
  'service/app.module.ts',
  // What only the service has.
  'service/health',
  'service/http-metrics',
  'service/load-shedding',
  'service/logging',
  'service/tracing',
  'service/openapi',
  'service/lifecycle',
  'service/http-server',
  'service/database',
  'service/config',
  'service/node-version.ts',
  'service/v8-flags.ts',
  // The package: its front file, the feature modules, what they stand on.
  'lib/index.ts',
  'lib/plants',
  'lib/auth',
  'lib/managed-tokens',
  'lib/validation-pipe',
  'lib/request-body',
  'lib/errors',
  'lib/database',
  'lib/metrics',
  'lib/field-rules',
  'lib/dynamic-modules',
  'lib/http-request',
];

/** Imports that run upward, each with its reason. None today. */
const EXCEPTIONS: ReadonlyMap<string, string> = new Map();

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The part a file belongs to: its half's folder, or the top-level file itself. */
function partOf(file: string): string {
  const [half, name] = relative(SRC, file).split('/');
  return `${half}/${name}`;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map(
    ([, specifier]) =>
      resolve(dirname(file), specifier).replace(/\.js$/, '.ts'),
  );
}

interface Edge {
  from: string;
  to: string;
  file: string;
}

function crossPartImports(): Edge[] {
  return sourceFiles(SRC).flatMap((file) =>
    importsOf(file)
      .filter((target) => target.startsWith(SRC + '/'))
      .map((target) => ({
        from: partOf(file),
        to: partOf(target),
        file: relative(ROOT, file),
      }))
      .filter(({ from, to }) => from !== to),
  );
}

describe('imports inside src run one way', () => {
  const edges = crossPartImports();

  it('finds the imports it judges (the check reads the tree it guards)', () => {
    expect(edges.length).toBeGreaterThan(50);
    expect(edges).toContainEqual({
      from: 'service/app.module.ts',
      to: 'lib/index.ts',
      file: 'src/service/app.module.ts',
    });
  });

  it('places every part of src in the layers', () => {
    const parts = new Set(sourceFiles(SRC).map(partOf));
    expect([...parts].filter((part) => !LAYERS.includes(part))).toEqual([]);
  });

  it('imports only downward, the package never the service, with every exception named', () => {
    const upward = edges
      .filter(({ from, to }) => LAYERS.indexOf(from) > LAYERS.indexOf(to))
      .filter(({ from, to }) => !EXCEPTIONS.has(`${from} -> ${to}`))
      .map(({ from, to, file }) => `${file}: ${from} -> ${to}`);
    expect(upward).toEqual([]);
  });

  it('has no pair of parts importing each other', () => {
    const pairs = new Set(edges.map(({ from, to }) => `${from} -> ${to}`));
    const mutual = [...pairs].filter((pair) => {
      const [from, to] = pair.split(' -> ');
      return pairs.has(`${to} -> ${from}`);
    });
    expect(mutual).toEqual([]);
  });
});

describe('the lint rules between the package and the service (.oxlintrc.json)', () => {
  let project: string;

  beforeAll(() => {
    project = mkdtempSync(join(tmpdir(), 'plant-store-lint-'));
    cpSync(join(ROOT, '.oxlintrc.json'), join(project, '.oxlintrc.json'));
    mkdirSync(join(project, 'src/lib/plants'), { recursive: true });
    mkdirSync(join(project, 'src/service/config'), { recursive: true });
    writeFileSync(
      join(project, 'src/service/config/settings.ts'),
      'export const settings = 1;\n',
    );
  });

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const lint = (file: string, text: string) => {
    writeFileSync(join(project, file), text);
    const run = spawnSync(
      join(ROOT, 'node_modules/.bin/oxlint'),
      ['-c', '.oxlintrc.json', '--deny-warnings', file],
      { cwd: project, encoding: 'utf8' },
    );
    rmSync(join(project, file));
    return { status: run.status, output: run.stdout + run.stderr };
  };

  it('fails a package file that imports the service, naming the fix', () => {
    const { status, output } = lint(
      'src/lib/plants/wrong.ts',
      "import { settings } from '../../service/config/settings.js';\nexport const value = settings;\n",
    );
    expect(status).not.toBe(0);
    expect(output).toContain('src/lib is the package');
  });

  it('passes the same import from the service, and a package file that stays inside', () => {
    expect(
      lint(
        'src/service/config/right.ts',
        "import { settings } from './settings.js';\nexport const value = settings;\n",
      ).status,
    ).toBe(0);
    expect(
      lint(
        'src/lib/plants/inside.ts',
        "import { join } from 'node:path';\nexport const value = join('a', 'b');\n",
      ).status,
    ).toBe(0);
  });

  it('fails a service file that imports a file inside the package, naming its front file, and passes the front file', () => {
    const importing = (specifier: string) =>
      lint(
        'src/service/config/uses-package.ts',
        `import { value as inner } from '${specifier}';\nexport const value = inner;\n`,
      );
    for (const specifier of [
      '../../lib/errors/api-error.js',
      '../../lib/database/migrations/index.js',
    ]) {
      const { status, output } = importing(specifier);
      expect(status, specifier).not.toBe(0);
      expect(output).toContain('src/lib/index.ts');
    }
    expect(importing('../../lib/index.js').status).toBe(0);
  });
});
