import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_BUNDLE_EXTERNALS } from '../../scripts/service-bundle-externals.mjs';

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** The installed packages an entry of the list names: a package, a scope, or a subpath. */
function installed(entry: string): Manifest[] {
  const [first, second] = entry.split('/');
  const names = entry.startsWith('@')
    ? second === undefined
      ? existsSync(join('node_modules', first))
        ? readdirSync(join('node_modules', first)).map(
            (name) => `${first}/${name}`,
          )
        : []
      : [`${first}/${second}`]
    : [first];
  return names
    .map((name) => join('node_modules', name, 'package.json'))
    .filter((path) => existsSync(path))
    .map((path) => JSON.parse(readFileSync(path, 'utf8')) as Manifest);
}

describe('the service bundle (scripts/bundle-service.mjs)', () => {
  it('leaves to Node no package of Nest, nor one that loads Nest: it would be a second copy beside the bundled one', () => {
    const loadingNest = SERVICE_BUNDLE_EXTERNALS.flatMap(installed).flatMap(
      (manifest) =>
        [
          manifest.name,
          ...Object.keys({
            ...manifest.dependencies,
            ...manifest.peerDependencies,
            ...manifest.optionalDependencies,
          }),
        ]
          .filter((name) => name.startsWith('@nestjs/'))
          .map((nest) => `${manifest.name}: ${nest}`),
    );
    expect(loadingNest).toEqual([]);
  });

  it('names packages that are installed, so that the check above reads each', () => {
    const optional = [
      'pg-native',
      '@nestjs/microservices',
      '@nestjs/websockets',
    ];
    expect(
      SERVICE_BUNDLE_EXTERNALS.filter(
        (entry) => !optional.includes(entry) && installed(entry).length === 0,
      ),
    ).toEqual([]);
  });
});
