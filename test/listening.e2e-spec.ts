import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { freePort } from '../test-kit/free-port.mjs';
import { processTree } from '../test-kit/process-tree.mjs';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { eventually } from './support/poll.js';
import { alive, portIsOpen } from './support/processes.js';
import { ServiceProcess } from './support/service-process.js';

/**
 * The built service taking its port, on the adapter of the project (Express, or Fastify
 * under e2e-fastify): each listens through its own adapter's listen. What the process does
 * before it listens, the same on either, is startup.e2e-spec.ts's.
 */
describe('the built service listening (dist/service/main.js)', () => {
  it('names the address it listens on as bound: 0.0.0.0, every IPv4 address', async () => {
    const port = await freePort();
    const service = ServiceProcess.start({
      DATABASE_URL: inject('databaseUrl'),
      PORT: String(port),
      HOST: '0.0.0.0',
      API_TOKENS: 'startup-check-token-0123456789abcdef',
    });
    try {
      const [, address] = await service.waitFor(
        /Plant Store listening on (\S+) /,
      );
      expect(address).toBe(`0.0.0.0:${port}`);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });

  it('runs WEB_CONCURRENCY workers on one port, and stops them all with exit 0', async () => {
    const port = await freePort();
    const service = ServiceProcess.start({
      DATABASE_URL: inject('databaseUrl'),
      API_TOKENS: 'cluster-token-0123456789abcdef',
      WEB_CONCURRENCY: '2',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
    });
    try {
      await service.waitFor(/Starting 2 workers/);
      // Each worker says it listens; both must, on the one port.
      await service.waitFor(
        /Plant Store listening on[\s\S]*Plant Store listening on/,
      );
      // Each listens before its database is migrated and connected (DatabaseStartup).
      await service.waitFor(
        /Database migrated and connected[\s\S]*Database migrated and connected/,
      );
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          postPlant(
            `http://127.0.0.1:${port}`,
            newPlantJson(uniqueId(), 'Clustered'),
            {
              token: 'cluster-token-0123456789abcdef',
            },
          ),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(
        Array(20).fill(200),
      );
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
  });

  it('leaves no embedded PostgreSQL behind when its HTTP port is taken (EADDRINUSE)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-port-taken-'));
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) =>
      taken.listen(port, '127.0.0.1', resolve),
    );
    const databasePort = await freePort();
    try {
      const service = ServiceProcess.start({
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        EMBEDDED_DATABASE_PORT: String(databasePort),
        API_TOKENS: 'startup-check-token-0123456789abcdef',
        // PostgreSQL's own lines, to see that it did start before the failure.
        LOG_LEVEL: 'debug',
      });
      // Its tree for as long as it runs: initdb, then the postmaster and its backends.
      const processes = new Set<number>();
      const exitCode = await eventually('the service to exit', () => {
        if (service.pid !== undefined && service.isRunning)
          for (const pid of processTree(service.pid)) processes.add(pid);
        return service.isRunning ? undefined : service.exitCode();
      });
      expect(exitCode).toBe(1);
      expect(service.text).toContain('EADDRINUSE');
      expect(service.text).toContain('database system is ready');
      await eventually(
        'every process of the start gone, the database port closed',
        async () =>
          alive([...processes]).length === 0 &&
          !(await portIsOpen(databasePort))
            ? true
            : undefined,
        { timeoutMs: 10_000 },
      );
    } finally {
      taken.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
