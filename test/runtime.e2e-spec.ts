import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { freePort } from '../test-kit/free-port.mjs';
import { productionNodeFlags } from '../test-kit/node-process.mjs';
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

describe('the runtime: the Node.js 24 the project brings, whatever the machine has', () => {
  it('runs the test processes', async () => {
    expect(process.version).toBe(await pinnedRuntime());
  });

  it("runs the service, with production's flags, and its start-up log says which", async () => {
    const service = ServiceProcess.start({
      DATABASE_URL: inject('databaseUrl'),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      API_TOKENS: 'runtime-check-token-0123456789abcdef',
    });
    try {
      const [, version] = await service.waitFor(
        /Plant Store listening on \S+ \(Node\.js (v[\d.]+)\)/,
      );
      expect(version).toBe(await pinnedRuntime());
      // With production's flags, as every test that starts the built service: they decide
      // its memory and its pauses under load.
      const commandLine = await readFile(
        `/proc/${service.pid}/cmdline`,
        'utf8',
      );
      expect(commandLine.split('\0').slice(1, -2)).toEqual(
        productionNodeFlags('.'),
      );
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
