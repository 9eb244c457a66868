import { mkdir, rm, writeFile } from 'node:fs/promises';
import { inject } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test-kit/free-port.mjs';
import { connectError } from '../test-kit/raw-http.js';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { ServiceProcess } from './support/service-process.js';

/** Whether anything accepts connections on the port. */
async function portIsOpen(port: number): Promise<boolean> {
  return (await connectError(port)) === undefined;
}

describe('starting the built service (dist/main.js)', () => {
  it.each([
    ['PORT', { PORT: 'eighty' }],
    ['BODY_LIMIT', { BODY_LIMIT: 'huge' }],
    [
      'DATABASE_URL',
      { DATABASE_URL: 'mysql://admin:hunter2-secret@db/plants' },
    ],
    [
      'API_TOKENS',
      { API_TOKENS: 'short', DATABASE_URL: 'postgres://u:p@127.0.0.1:1/test' },
    ],
  ])(
    'stops with a message naming %s when it is invalid, without its value',
    async (name, env) => {
      const service = ServiceProcess.start(env);
      expect(await service.exitCode()).toBe(1);
      expect(service.text).toContain(`Invalid configuration: ${name} `);
      for (const value of Object.values(env))
        expect(service.text).not.toContain(value);
    },
  );

  /** Every line of the output parsed as JSON; fails on the first that is not. */
  function jsonLines(text: string): Record<string, unknown>[] {
    return text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          throw new Error(`Not a JSON line: ${line}\nOutput:\n${text}`);
        }
      });
  }

  it.each([
    ['a refused setting', { PORT: 'eighty' }, 'Invalid configuration: PORT'],
    [
      'an unreachable database',
      {
        DATABASE_URL: 'postgres://u:p@127.0.0.1:1/plant_store_test',
        API_TOKENS: 'startup-check-token-0123456789abcdef',
      },
      'The service failed to start',
    ],
  ])(
    'writes every line as JSON when the start fails on %s',
    async (_, env, message) => {
      // LOG_FORMAT is left to its default: JSON wherever the output is not a terminal.
      const service = ServiceProcess.start(env);
      expect(await service.exitCode()).toBe(1);
      const messages = jsonLines(service.text).map((line) => line.msg);
      expect(messages).toContainEqual(expect.stringContaining(message));
    },
  );

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

  it('starts on an external database with no token, warning how to create one', async () => {
    const port = await freePort();
    // A database of its own: other suites create managed tokens in the shared one.
    const databaseUrl = await createScratchDatabase(
      inject('databaseUrl'),
      'no_token',
    );
    const service = ServiceProcess.start({
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
    });
    try {
      await service.waitFor(
        /No API token is active.*npm run token -- create --name <name>/,
      );
      const answer = await postPlant(
        `http://127.0.0.1:${port}`,
        newPlantJson(uniqueId(), 'Fern'),
        {
          token: 'pst_nothing-is-valid-yet',
        },
      );
      expect(answer.status).toBe(401);
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

  it('refuses WEB_CONCURRENCY above 1 on the embedded database', async () => {
    const service = ServiceProcess.start({ WEB_CONCURRENCY: '2' });
    expect(await service.exitCode()).toBe(1);
    expect(service.text).toContain(
      'WEB_CONCURRENCY above 1 needs DATABASE_URL',
    );
  });

  it('exits 1 when the embedded PostgreSQL cannot start', async () => {
    // A cluster directory PostgreSQL refuses: the library is loaded, then the start fails.
    const dataDir = join(tmpdir(), `plant-store-broken-${process.pid}`);
    await mkdir(join(dataDir, 'postgres'), { recursive: true });
    await writeFile(join(dataDir, 'postgres', 'PG_VERSION'), '7\n');
    try {
      const service = ServiceProcess.start({
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        EMBEDDED_DATABASE_PORT: String(await freePort()),
      });
      expect(await service.exitCode()).toBe(1);
      expect(service.text).toContain('The embedded PostgreSQL did not start');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  describe('with no DATABASE_URL: the embedded PostgreSQL and a development token', () => {
    const dataDir = join(tmpdir(), `plant-store-startup-${process.pid}`);
    let env: Record<string, string>;

    beforeAll(async () => {
      env = {
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        EMBEDDED_DATABASE_PORT: String(await freePort()),
      };
    });
    afterAll(() => rm(dataDir, { recursive: true, force: true }));

    it('starts, prints a working token with a curl command, keeps data and token across restarts, stops cleanly', async () => {
      const baseUrl = `http://127.0.0.1:${env.PORT}`;
      const id = uniqueId();

      const first = ServiceProcess.start(env);
      const [, token] = await first.waitFor(
        /Development token \(kept in .*\): (\S+)/,
      );
      expect(first.text).toContain(
        `curl -s -X POST http://127.0.0.1:${env.PORT}/plants`,
      );
      expect(first.text).toContain(`Authorization: Bearer ${token}`);
      expect(
        (await postPlant(baseUrl, newPlantJson(id, 'Kept'), { token })).status,
      ).toBe(200);
      expect(
        (
          await postPlant(baseUrl, newPlantJson(uniqueId(), 'Kept'), {
            token: 'dev_wrong',
          })
        ).status,
      ).toBe(401);

      expect(await first.stop('SIGTERM')).toBe(0);
      expect(await portIsOpen(Number(env.EMBEDDED_DATABASE_PORT))).toBe(false);

      const second = ServiceProcess.start(env);
      const [, sameToken] = await second.waitFor(
        /Development token \(kept in .*\): (\S+)/,
      );
      try {
        expect(sameToken).toBe(token);
        // The row from the first run is still there: same content replays, other content conflicts.
        expect(
          (await postPlant(baseUrl, newPlantJson(id, 'Kept'), { token }))
            .status,
        ).toBe(200);
        expect(
          (await postPlant(baseUrl, newPlantJson(id, 'Changed'), { token }))
            .status,
        ).toBe(409);
        expect((await send(`${baseUrl}/health`)).status).toBe(200);
      } finally {
        expect(await second.stop('SIGINT')).toBe(0);
      }
      expect(await portIsOpen(Number(env.EMBEDDED_DATABASE_PORT))).toBe(false);
    });
  });
});
