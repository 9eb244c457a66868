import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test-kit/free-port.mjs';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { portIsOpen } from './support/processes.js';
import { eventually } from './support/poll.js';
import { ServiceProcess } from './support/service-process.js';

describe('starting the built service (dist/service/main.js)', () => {
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
      // An unreachable one is waited for (below); a database that refuses is a failed start.
      'a database that does not exist',
      {
        DATABASE_URL: 'missing-database',
        API_TOKENS: 'startup-check-token-0123456789abcdef',
      },
      'The service failed to start',
    ],
  ])(
    'writes every line as JSON when the start fails on %s',
    async (_, given: Record<string, string>, message) => {
      let env = given;
      if (env.DATABASE_URL === 'missing-database') {
        const url = new URL(inject('databaseUrl'));
        url.pathname = '/plant_store_no_such_database';
        env = { ...env, DATABASE_URL: url.href };
      }
      // LOG_FORMAT is left to its default: JSON wherever the output is not a terminal.
      const service = ServiceProcess.start(env);
      expect(await service.exitCode()).toBe(1);
      const messages = jsonLines(service.text).map((line) => line.msg);
      expect(messages).toContainEqual(expect.stringContaining(message));
    },
  );

  it('starts while its database cannot be reached: live, not ready, creates 503, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const service = ServiceProcess.start({
      DATABASE_URL: `postgres://u:p@127.0.0.1:${await freePort()}/plant_store_test`,
      PORT: String(port),
      HOST: '127.0.0.1',
      API_TOKENS: 'startup-check-token-0123456789abcdef',
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await service.waitFor(/Plant Store listening on/);
      expect((await send(`${url}/health/live`)).status).toBe(200);
      const ready = await send(`${url}/health/ready`);
      expect({ status: ready.status, body: ready.body }).toEqual({
        status: 503,
        body: {
          error: 503,
          message:
            'The service is not ready: it is starting (its database has not answered yet).',
        },
      });
      const create = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
        token: 'startup-check-token-0123456789abcdef',
      });
      expect({
        status: create.status,
        body: create.body,
        retryAfter: create.headers.get('retry-after'),
      }).toEqual({
        status: 503,
        body: {
          error: 503,
          message: 'The database is unavailable; retry later.',
        },
        retryAfter: expect.any(String),
      });
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

  it('refuses a Node.js older than engines allows, with one JSON line, before anything starts', async () => {
    // The machine's own Node (Debian's 20) where there is one older than the project's.
    const old = await promisify(execFile)('/usr/bin/node', ['--version']).then(
      ({ stdout }) => stdout.trim(),
      () => undefined,
    );
    expect(old, 'an older Node.js at /usr/bin/node').toMatch(
      /^v(1\d|2[0-3])\./,
    );
    const { code, output } = await new Promise<{
      code: number | null;
      output: string;
    }>((resolve) => {
      execFile(
        '/usr/bin/node',
        ['dist/service/main.js'],
        (error, stdout, stderr) =>
          resolve({
            code: error === null ? 0 : (error.code as number),
            output: stdout + stderr,
          }),
      );
    });
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 60,
      msg: `Node.js ${old} is not supported: Plant Store needs Node.js ^24.11.0 (package.json engines; npm ci brings it: docs/runtime.md)`,
    });
  });

  it('stops a stale embedded PostgreSQL whose service was SIGKILLed, and says so', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'plant-store-stale-'));
    const env = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      EMBEDDED_DATABASE_PORT: String(await freePort()),
      API_TOKENS: 'startup-check-token-0123456789abcdef',
      LOG_FORMAT: 'json',
    };
    try {
      const first = ServiceProcess.start({ ...env, INSTANCE_ID: 'first' });
      await first.waitFor(/listening on/);
      first.signal('SIGKILL');
      await first.exitCode();
      // Left running by the kill: the old run's database still holds its port.
      expect(await portIsOpen(Number(env.EMBEDDED_DATABASE_PORT))).toBe(true);

      const second = ServiceProcess.start({ ...env, INSTANCE_ID: 'second' });
      try {
        await second.waitFor(/listening on/);
        expect(second.text).toMatch(
          /Stopped a stale embedded PostgreSQL \(pid \d+\) left running in \S+ by a process that is gone \(pid \d+\)/,
        );
        // Listening comes before the database is migrated and connected (DatabaseStartup).
        const health = await eventually(
          'the second service healthy',
          async () => {
            const answer = await send(`http://127.0.0.1:${env.PORT}/health`);
            return answer.status === 200 ? answer : undefined;
          },
        );
        expect(health.body).toEqual({ status: 'ok', instance: 'second' });
      } finally {
        expect(await second.stop()).toBe(0);
      }
      expect(await portIsOpen(Number(env.EMBEDDED_DATABASE_PORT))).toBe(false);
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
