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
    'src/lib/request-body/**/*.ts',
    'src/lib/validation-pipe/**/*.ts',
    'src/lib/errors/**/*.ts',
    'src/lib/plants/plants.controller.ts',
    'src/lib/plants/plants.service.ts',
    'src/lib/plants/plants.repository.ts',
    'src/lib/plants/plant-insert.batcher.ts',
    'src/lib/auth/bearer-auth.guard.ts',
    'src/lib/auth/token-rate-limit.guard.ts',
    'src/lib/auth/token-verifier.ts',
    'src/lib/auth/api-token.verifier.ts',
    'src/lib/managed-tokens/active-tokens.ts',
    'src/lib/managed-tokens/active-tokens.store.ts',
    'src/service/**/*.ts',
    'src/lib/database/database-errors.ts',
    'src/lib/database/write-circuit.ts',
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
