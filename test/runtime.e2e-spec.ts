import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { SERVICE_V8_FLAGS } from '../src/service/v8-flags.js';
import { freePort } from '../test-kit/free-port.mjs';
import { startNodeProcess } from '../test-kit/node-process.mjs';
import { eventually } from './support/poll.js';
import { ServiceProcess } from './support/service-process.js';

/** The Node.js the project pins as a development dependency (`node` on npm). */
async function pinnedRuntime(): Promise<string> {
  const pkg = JSON.parse(await readFile('package.json', 'utf8')) as {
    devDependencies: Record<string, string>;
    engines: { node: string };
  };
  expect(pkg.engines.node).toMatch(/^\^24\./);
  return `v${pkg.devDependencies.node}`;
}

interface HeapReport {
  pid: number;
  execArgv: string[];
  heapSizeLimit: number;
}

/** V8's heap size limit in a process started with `flags` on this Node binary. */
function heapSizeLimitWith(flags: readonly string[]): number {
  return Number(
    execFileSync(process.execPath, [
      ...flags,
      '-p',
      "require('node:v8').getHeapStatistics().heap_size_limit",
    ]),
  );
}

describe('the runtime: the Node.js 24 the project brings, whatever the machine has', () => {
  it('runs the test processes', async () => {
    expect(process.version).toBe(await pinnedRuntime());
  });

  it('runs the service, with its V8 flags, and its start-up log says which Node.js', async () => {
    const service = ServiceProcess.start({
      DATABASE_URL: inject('databaseUrl'),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      API_TOKENS: 'runtime-check-token-0123456789abcdef',
    });
    try {
      const [, version, adapter] = await service.waitFor(
        /Plant Store listening on \S+ \(Node\.js (v[\d.]+), on (\w+)\)/,
      );
      expect(version).toBe(await pinnedRuntime());
      // The adapter this project runs the service on (Express unless told).
      expect(adapter).toBe(process.env.HTTP_ADAPTER ?? 'express');
      // They decide its memory and its pauses under load.
      const commandLine = await readFile(
        `/proc/${service.pid}/cmdline`,
        'utf8',
      );
      expect(commandLine.split('\0').slice(1, -2)).toEqual(SERVICE_V8_FLAGS);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it('started as `node dist/service/main.js`, without flags, starts over once with them, in the same process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-v8-'));
    const reportFile = join(dir, 'heap.jsonl');
    const preload = `--import=${resolve('test/fixtures/v8-heap-report.mjs')}`;
    let output = '';
    const { child, exited } = startNodeProcess({
      args: [preload, resolve('dist/service/main.js')],
      env: {
        PATH: process.env.PATH ?? '',
        NO_COLOR: '1',
        SHUTDOWN_DELAY_MS: '100',
        DATABASE_URL: inject('databaseUrl'),
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        API_TOKENS: 'runtime-check-token-0123456789abcdef',
        V8_HEAP_REPORT: reportFile,
      },
      onOutput: (text) => (output += text),
    });
    try {
      await eventually('the service listening', () =>
        output.includes('Plant Store listening on') ? true : undefined,
      );
      const reports = (await readFile(reportFile, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as HeapReport);
      // The process as started, then as it started over: one pid, no parent left behind.
      expect(reports.map((report) => report.pid)).toEqual([
        child.pid,
        child.pid,
      ]);
      expect(reports.map((report) => report.execArgv)).toEqual([
        [preload],
        [...SERVICE_V8_FLAGS, preload],
      ]);
      // V8 set the heap up with the service's young generation, not its own default.
      expect(reports[1].heapSizeLimit).toBe(
        heapSizeLimitWith(SERVICE_V8_FLAGS),
      );
    } finally {
      child.kill('SIGTERM');
      expect((await exited).code).toBe(0);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
