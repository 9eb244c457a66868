import { defineConfig } from 'vitest/config';
import { SUITE_SETTINGS, unitProject } from './test/support/vitest-projects.js';

/** What Stryker runs against each mutant (stryker.config.mjs): the unit specs beside the code. */
export default defineConfig({
  test: {
    ...SUITE_SETTINGS,
    root: './',
    projects: [unitProject(['src/**/*.spec.ts'])],
  },
});
