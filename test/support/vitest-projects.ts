import { globSync, readFileSync } from 'node:fs';
import {
  configDefaults,
  type TestProjectInlineConfiguration,
} from 'vitest/config';

/**
 * What every run of the suite's projects shares, whatever its root: Vitest's globals, and a
 * setup before each test of every project that fails a test without an assertion
 * (test/support/every-test-asserts.ts). vitest.config.ts, stryker.vitest.config.ts and the
 * exit-code check's fixtures all take it from here.
 */
export const SUITE_SETTINGS = {
  globals: true,
  setupFiles: ['test/support/every-test-asserts.ts'],
};

/**
 * The test projects, defined once: vitest.config.ts runs them on the real specs, and the
 * exit-code check (test/repository/test-runner-exit-code.repository-spec.ts) runs them on
 * fixtures, so it checks the very setup the suite uses.
 */
export function unitProject(include: string[]): TestProjectInlineConfiguration {
  return {
    extends: true,
    // Vitest's 5 s is a quiet machine's: on a loaded 2-core one, a spec that imports a
    // module graph afresh (token.spec.ts) or a property test of 2,000 runs took 6-9 s.
    test: { name: 'unit', include, testTimeout: 20_000 },
  };
}

/** A spec that replaces a module (`vi.mock`, `vi.doMock`) for every file that imports it. */
const REPLACES_A_MODULE = /\bvi\.(do)?[mM]ock\(/;

/**
 * A spec that starts the service's OpenTelemetry SDK: some of what it registers outlives its
 * stop and `trace.disable()` (pg's instrumentation stays hooked on `require`, and a tracer taken
 * before keeps the SDK's provider), so it needs a process of its own.
 */
const STARTS_THE_SDK = /\bstartTracingSdk\(/;

/** The files among `include` whose text matches any of `patterns`. */
function specsMatching(include: string[], ...patterns: RegExp[]): string[] {
  return globSync(include).filter((file) => {
    const text = readFileSync(file, 'utf8');
    return patterns.some((pattern) => pattern.test(text));
  });
}

/**
 * The unit specs as the suite runs them: `unit` in one module graph (`isolate: false`), since a
 * fork per file loads Nest, TypeORM, class-validator and OpenTelemetry again for each, five
 * times the time (docs/testing.md); and, found by their text, the files that replace a module
 * (in a shared graph the real module may be loaded first) or start the OpenTelemetry SDK, in
 * `unit-isolated`, a process each.
 */
export function unitProjects(
  include: string[],
): TestProjectInlineConfiguration[] {
  const ownProcess = specsMatching(include, REPLACES_A_MODULE, STARTS_THE_SDK);
  const shared = unitProject(include);
  const isolated: TestProjectInlineConfiguration = {
    extends: true,
    test: { ...shared.test, name: 'unit-isolated', include: ownProcess },
  };
  return [
    {
      ...shared,
      test: {
        ...shared.test,
        exclude: [...configDefaults.exclude, ...ownProcess],
        isolate: false,
      },
    },
    ...(ownProcess.length === 0 ? [] : [isolated]),
  ];
}

export function e2eProject(include: string[]): TestProjectInlineConfiguration {
  return onTestPostgres('e2e', include);
}

/**
 * The same e2e specs with the service on Fastify (HTTP_ADAPTER=fastify), but for those in
 * `exclude`: the package's specs in a host's application, which run each host adapter
 * themselves (host-app.ts); the test kit's (the service it starts is the same); and what
 * the process does before it listens or beside HTTP (startup: settings, the embedded
 * PostgreSQL; the token CLI; the token store's sync), the same code on either adapter.
 * Listening itself is listening.e2e-spec.ts's, on both.
 */
export function e2eOnFastifyProject(
  include: string[],
  exclude: string[],
): TestProjectInlineConfiguration {
  const project = onTestPostgres('e2e-fastify', include);
  return {
    ...project,
    test: { ...project.test, exclude, env: { HTTP_ADAPTER: 'fastify' } },
  };
}

/**
 * The repository's own checks (test/repository): its deployment files, its docs, its
 * package and its test setup, rather than the service's behaviour. Some run the built
 * service or the packed package on PostgreSQL, so they get what the e2e specs get.
 */
export function repositoryProject(
  include: string[],
): TestProjectInlineConfiguration {
  return onTestPostgres('repository', include);
}

/**
 * Specs run side by side on the run's one PostgreSQL (global-setup.ts), in one module graph
 * per project (`isolate: false`), as the unit specs are: a fork per file imported Nest, TypeORM
 * and the service again for each, 23 s of the e2e project's 219 s (docs/testing.md). So a spec
 * there may not replace a module (`vi.mock`): the config refuses one, naming it.
 */
function onTestPostgres(
  name: string,
  include: string[],
): TestProjectInlineConfiguration {
  // In one graph a replaced module would reach every later spec: stop at the config.
  const replacing = specsMatching(include, REPLACES_A_MODULE);
  if (replacing.length > 0)
    throw new Error(
      `${replacing.join(', ')} replace a module (vi.mock): the ${name} project runs its specs in one module graph; replace a dependency through Nest's testing module instead.`,
    );
  return {
    extends: true,
    test: {
      name,
      include,
      globalSetup: ['test/support/global-setup.ts'],
      isolate: false,
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
}

/**
 * The reliability scenarios (test/reliability) as two projects:
 * - `reliability`, those that judge what clients got through a fault (a failover, a rollout,
 *   a hung or lost database, killed replicas, slow and hostile clients), not how much the
 *   machine serves. They hold on a loaded machine by design, so they run beside the e2e and
 *   repository specs rather than after them.
 * - `capacity`, the files named in `capacity`, which measure the service's capacity and
 *   compare rates taken in the same run (overload, the failed-authentication flood): one at a
 *   time, in a group of their own after every other project's files (`sequence.groupOrder`),
 *   so that no other spec shares the machine with them.
 */
export function reliabilityProjects(
  include: string[],
  capacity: string[],
): TestProjectInlineConfiguration[] {
  // A renamed file would match nothing here and leave the others' exclude: it would then
  // run beside the suite, measuring the suite rather than the service. Stop at the config.
  const missing = capacity.filter((file) => globSync(file).length === 0);
  if (missing.length > 0)
    throw new Error(
      `${missing.join(', ')}: no such file, though named to run alone as a capacity scenario.`,
    );
  const scenarios = (
    name: string,
    test: TestProjectInlineConfiguration['test'],
  ): TestProjectInlineConfiguration => ({
    extends: true,
    test: {
      name,
      globalSetup: ['test/support/global-setup.ts'],
      testTimeout: 180_000,
      hookTimeout: 60_000,
      ...test,
    },
  });
  return [
    scenarios('reliability', {
      include,
      exclude: [...configDefaults.exclude, ...capacity],
    }),
    scenarios('capacity', {
      include: capacity,
      fileParallelism: false,
      sequence: { groupOrder: 1 },
    }),
  ];
}

/**
 * The container image (test/image): built once with podman by the project's global setup
 * for all its specs, in the background while the other projects run (the first build of a
 * machine takes minutes, later ones reuse podman's cache); its specs wait for the build, then
 * run beside the other projects' specs (they mostly wait on podman).
 */
export function imageProject(
  include: string[],
): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name: 'image',
      include,
      globalSetup: ['test/support/image/image-setup.ts'],
      setupFiles: ['test/support/image/built-image.ts'],
      testTimeout: 120_000,
      hookTimeout: 60_000,
    },
  };
}
