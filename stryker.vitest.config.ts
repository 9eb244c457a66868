import { defineConfig } from 'vitest/config';
import { unitProject } from './test/support/vitest-projects.js';

/** What Stryker runs against each mutant (stryker.config.mjs): the unit specs beside the code. */
export default defineConfig({
  test: {
    globals: true,
    root: './',
    projects: [unitProject(['src/**/*.spec.ts'])],
  },
});
