import { defineConfig } from 'vitest/config';
import {
  e2eOnFastifyProject,
  e2eProject,
  imageProject,
  reliabilityProjects,
  repositoryProject,
  SUITE_SETTINGS,
  unitProjects,
} from './test/support/vitest-projects.js';

export default defineConfig({
  test: {
    ...SUITE_SETTINGS,
    root: './',
    // Three files at once, from every project but capacity (which runs alone, one file at a
    // time, after them): one file at a time kept this 2-core machine 45-70% busy; two took the
    // unit, e2e, e2e-fastify and repository projects from 403 s to 269 s quiet. With the
    // reliability scenarios that wait on faults and the image specs beside them, three files
    // at once keep both cores busy: Vitest 582 s with two (the image specs still after), 528 s
    // with three (docs/testing.md).
    maxWorkers: 3,
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
      ...reliabilityProjects(
        ['test/reliability/**/*.reliability-spec.ts'],
        [
          'test/reliability/overload.reliability-spec.ts',
          'test/reliability/auth-flood.reliability-spec.ts',
        ],
      ),
      imageProject(['test/image/**/*.image-spec.ts']),
    ],
  },
});
