// Mutation testing (npm run test:mutation; docs/testing.md#mutation-testing): Stryker over the
// files that decide what a client gets, with the unit specs. Outside CI's time: a full run
// takes tens of minutes on 2 cores, an incremental one only what a change touched.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'stryker.vitest.config.ts' },
  // Mutants that do not compile are not counted (src only: the specs are not mutated).
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.build.json',
  coverageAnalysis: 'perTest',
  mutate: [
    'src/request-body/**/*.ts',
    'src/validation-pipe/**/*.ts',
    'src/errors/**/*.ts',
    'src/plants/plants.controller.ts',
    'src/plants/plants.service.ts',
    'src/plants/plants.repository.ts',
    'src/plants/plant-insert.batcher.ts',
    'src/auth/bearer-auth.guard.ts',
    'src/auth/token-rate-limit.guard.ts',
    'src/auth/token-verifier.ts',
    'src/auth/api-token.verifier.ts',
    'src/auth/active-tokens.ts',
    'src/auth/active-tokens.store.ts',
    'src/load-shedding/**/*.ts',
    'src/database/database-errors.ts',
    'src/database/database-health.ts',
    '!src/**/*.spec.ts',
  ],
  // Kept in git: a later run re-tests only the mutants whose code or tests changed.
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['html', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  // A shared 2-core machine.
  concurrency: 2,
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
};
