import { defineConfig } from 'vitest/config';
import {
  e2eOnFastifyProject,
  e2eProject,
  imageProject,
  reliabilityProject,
  repositoryProject,
  unitProjects,
} from './test/support/vitest-projects.js';

export default defineConfig({
  test: {
    globals: true,
    root: './',
    // Two files at once in the unit, e2e, e2e-fastify and repository projects (Vitest's
    // default here is one, cores - 1): one file at a time kept this 2-core machine 45-70%
    // busy, two took those projects from 403 s to 269 s quiet, 330 s beside a busy loop
    // (docs/testing.md). The reliability and image projects keep to one file at a time.
    maxWorkers: 2,
    projects: [
      ...unitProjects(['src/**/*.spec.ts', 'test-kit/**/*.spec.ts']),
      e2eProject(['test/**/*.e2e-spec.ts']),
      e2eOnFastifyProject(
        ['test/**/*.e2e-spec.ts'],
        [
          'test/modules-*.e2e-spec.ts',
          'test/host-schema.e2e-spec.ts',
          'test/testing-entry.e2e-spec.ts',
          'test/testing-kit.e2e-spec.ts',
          'test/startup.e2e-spec.ts',
          'test/token-cli.e2e-spec.ts',
          'test/token-sync.e2e-spec.ts',
        ],
      ),
      repositoryProject(['test/repository/**/*.repository-spec.ts']),
      reliabilityProject(['test/reliability/**/*.reliability-spec.ts']),
      imageProject(['test/image/**/*.image-spec.ts']),
    ],
  },
});
