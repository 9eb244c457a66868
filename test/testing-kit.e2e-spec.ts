import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNodeProcess } from '../test-kit/node-process.mjs';
import { processTree } from '../test-kit/process-tree.mjs';
import {
  INSTALL_TIMEOUT_MS,
  installTestingProject,
  run,
  TESTING_PAGE,
} from './support/packed-package.js';
import { writePageFiles } from './support/page-blocks.js';
import { eventually } from './support/poll.js';
import { storeStartedByAnotherProcess } from './support/processes.js';

const RUN_TIMEOUT_MS = 240_000;
const RECIPES = [
  'plant-store.per-file.mjs',
  'managed-tokens.test.mjs',
  'database-down.test.mjs',
  'rate-limit.test.mjs',
  'overload.test.mjs',
  'vitest.workers.config.mjs',
  'jest.workers.config.json',
  'plant-store.shared-setup.mjs',
  'vitest.shared.config.mjs',
  'shelf.shared-spec.mjs',
];
/** A test file that holds its store until the run is killed, four times over. */
const HOLD = `import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usePlantStore } from './plant-store.per-file.mjs';

const store = usePlantStore();

test('holds its store until the run is killed', async () => {
  await writeFile(join(process.env.MARKS, String(process.pid)), store().url);
  await new Promise(() => {});
}, 600_000);
`;

/** Processes whose command line or environment names `path`: a store's, or a run's. */
function processesNaming(path: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environment = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (command.includes(path) || environment.includes(path))
        found.push(`${entry} ${command.replaceAll('\0', ' ').slice(0, 200)}`);
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/**
 * docs/testing-against-plant-store.md's recipes as another team runs them: the packed
 * tarball installed in a scratch project, each test file with a store of its own, four at a
 * time under Vitest and under Jest. The suites' temporary directory is a folder of this
 * spec's own, so what a run leaves there, and any process that names it, is this run's.
 */
describe('plant-store/testing from the packed tarball: a store per worker, reset, tokens, faults', () => {
  let folder: string;
  let suite: string;
  let temporary: string;

  beforeAll(async () => {
    folder = await installTestingProject('plant-store-kit-');
    temporary = join(folder, 'tmp');
    await mkdir(temporary, { mode: 0o755 });
    suite = join(folder, 'suite');
    await writePageFiles(TESTING_PAGE, suite, RECIPES);
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rm(folder, { recursive: true, force: true }));

  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH ?? '',
    CI: 'true',
    NO_COLOR: '1',
    TMPDIR: temporary,
  });

  /** The installed Vitest's command line, run with `config` from its folder. */
  const vitest = (config: string): string[] => [
    join(folder, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--config',
    config,
  ];

  /** The stores' folders in the runs' temporary directory. */
  async function storeFolders(): Promise<string[]> {
    return (await readdir(temporary)).filter((name) =>
      name.startsWith('plant-store-test-'),
    );
  }

  async function expectNothingLeft(): Promise<void> {
    await eventually(
      'no process and no store folder of the run left',
      async () =>
        processesNaming(temporary).length === 0 &&
        (await storeFolders()).length === 0
          ? true
          : undefined,
    ).catch(async (error: unknown) => {
      throw new Error(
        `${String(error)}: ${JSON.stringify({
          processes: processesNaming(temporary),
          folders: await storeFolders(),
        })}`,
      );
    });
  }

  it(
    'Vitest, four forks: every recipe passes, each file on its own store, and nothing is left',
    async () => {
      const { stdout } = await run(
        process.execPath,
        vitest('vitest.workers.config.mjs'),
        { cwd: suite, env: env(), timeout: RUN_TIMEOUT_MS },
      );
      expect(stdout).toMatch(/Test Files\s+4 passed \(4\)/);
      expect(stdout).toMatch(/Tests\s+5 passed \(5\)/);
      await expectNothingLeft();
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'Jest, four workers: the same files pass, and nothing is left',
    async () => {
      const { stderr } = await run(
        process.execPath,
        [
          '--experimental-vm-modules',
          join(folder, 'node_modules', 'jest', 'bin', 'jest.js'),
          '--config',
          'jest.workers.config.json',
        ],
        { cwd: suite, env: env(), timeout: RUN_TIMEOUT_MS },
      );
      // Jest writes its summary on stderr.
      expect(stderr).toMatch(/Test Suites:\s+4 passed, 4 total/);
      expect(stderr).toMatch(/Tests:\s+5 passed, 5 total/);
      await expectNothingLeft();
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'Vitest, a shared PostgreSQL from the global setup: each file its own database, and nothing is left',
    async () => {
      // Two files, so two stores at once on the one server.
      await writeFile(
        join(suite, 'second-shelf.shared-spec.mjs'),
        await readFile(join(suite, 'shelf.shared-spec.mjs')),
      );
      const { stdout } = await run(
        process.execPath,
        vitest('vitest.shared.config.mjs'),
        { cwd: suite, env: env(), timeout: RUN_TIMEOUT_MS },
      );
      expect(stdout).toMatch(/Tests\s+2 passed \(2\)/);
      await expectNothingLeft();
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  it(
    'a Vitest run SIGKILLed with four stores running leaves no process and no folder',
    async () => {
      const held = join(folder, 'held');
      await mkdir(held);
      const marks = join(folder, 'marks');
      await mkdir(marks);
      for (const n of [1, 2, 3, 4])
        await writeFile(join(held, `hold-${n}.test.mjs`), HOLD);
      await writePageFiles(TESTING_PAGE, held, [
        'plant-store.per-file.mjs',
        'vitest.workers.config.mjs',
      ]);
      let output = '';
      const runner = startNodeProcess({
        args: vitest('vitest.workers.config.mjs'),
        cwd: held,
        env: { ...env(), MARKS: marks },
        onOutput: (text: string) => (output += text),
      });
      await eventually(
        'four stores started',
        async () => ((await readdir(marks)).length === 4 ? true : undefined),
        { timeoutMs: 120_000, everyMs: 100 },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; Vitest printed:\n${output}`);
      });
      // The forks, four services, four keepers and their PostgreSQL servers.
      expect(processesNaming(temporary).length).toBeGreaterThanOrEqual(12);

      runner.child.kill('SIGKILL');
      await runner.exited;
      await expectNothingLeft();
    },
    RUN_TIMEOUT_MS,
  );

  it(
    'a store whose keeper was killed too is removed by the next start, its PostgreSQL stopped',
    async () => {
      const entry = join(
        folder,
        'node_modules',
        'plant-store',
        'dist',
        'service',
        'testing',
        'index.js',
      );
      const { parent } = await storeStartedByAnotherProcess(entry, {
        env: env(),
      });
      // Everything but PostgreSQL killed at once: nobody is left to stop it.
      const tree = processTree(parent.child.pid ?? 0);
      const postgres = tree.filter((pid) =>
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres'),
      );
      expect(postgres.length).toBeGreaterThan(0);
      for (const pid of tree.filter((id) => !postgres.includes(id)))
        process.kill(pid, 'SIGKILL');
      await parent.exited;
      expect(await storeFolders()).toHaveLength(1);
      expect(processesNaming(temporary).length).toBeGreaterThan(0);

      const next = startNodeProcess({
        args: [
          '--input-type=module',
          '-e',
          `const { startPlantStore } = await import(${JSON.stringify(entry)});\n` +
            'await (await startPlantStore()).stop();',
        ],
        env: env(),
      });
      expect((await next.exited).code).toBe(0);
      await expectNothingLeft();
    },
    RUN_TIMEOUT_MS,
  );
});
