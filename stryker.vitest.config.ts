import { defineConfig } from 'vitest/config';
import {
  EVERY_TEST_ASSERTS,
  unitProject,
} from './test/support/vitest-projects.js';

/** What Stryker runs against each mutant (stryker.config.mjs): the unit specs beside the code. */
export default defineConfig({
  test: {
    globals: true,
    root: './',
    setupFiles: [EVERY_TEST_ASSERTS],
    projects: [unitProject(['src/**/*.spec.ts'])],
  },
});
