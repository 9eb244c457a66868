import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

interface RunnerResult {
  code: number | null;
  output: string;
}

/**
 * Runs Vitest as CI does, on the suite's own e2e, reliability and capacity projects pointed at the
 * fixtures in test/fixtures/test-runner-exit. No DATABASE_URL: the embedded PostgreSQL is
 * what once overrode a failing run's exit code with 0.
 */
function runFixtures(project: string, filter: string): Promise<RunnerResult> {
  const child = spawn(
    process.execPath,
    [
      resolve('node_modules/vitest/vitest.mjs'),
      'run',
      '--config',
      'test/fixtures/test-runner-exit/vitest.config.ts',
      '--project',
      project,
      filter,
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on(
    'data',
    (chunk: Buffer) => (output += chunk.toString('utf8')),
  );
  child.stderr.on(
    'data',
    (chunk: Buffer) => (output += chunk.toString('utf8')),
  );
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, output }));
  });
}

describe('the test runner exit code, with the embedded PostgreSQL started', () => {
  it.each([
    ['e2e', 'passing'],
    ['reliability', 'passing'],
  ])(
    'is 0 when every %s fixture passes (the control)',
    async (project, filter) => {
      const { code, output } = await runFixtures(project, filter);
      expect({ code, output }).toMatchObject({ code: 0 });
      expect(output).toMatch(/Tests\s+1 passed \(1\)/);
    },
    120_000,
  );

  it.each([
    ['e2e', 'failing-test', /Tests\s+1 failed \(1\)/],
    ['e2e', 'failing-setup', /Tests\s+1 skipped \(1\)|Tests\s+1 failed/],
    ['e2e', 'failing-teardown', /Errors|afterAll/],
    ['capacity', 'failing-test', /Tests\s+1 failed \(1\)/],
    // Nothing in it throws: the suite's every-test-asserts setup fails it.
    [
      'e2e',
      'asserting-nothing',
      /expected any number of assertion, but got none[\s\S]*Tests\s+1 failed \(1\)/,
    ],
  ])(
    'is non-zero when the %s fixture %s fails',
    async (project, filter, summary) => {
      const { code, output } = await runFixtures(project, filter);
      expect(output).toMatch(/Test Files\s+1 failed \(1\)/);
      expect(output).toMatch(summary);
      expect(code).toBe(1);
    },
    120_000,
  );
});
