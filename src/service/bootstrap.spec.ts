import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as ServiceLogger } from 'nestjs-pino';
import { freePort } from '../../test-kit/free-port.mjs';
import { copyOfKitCluster } from '../../test/support/kit-template.js';
import {
  captureNestLogs,
  keepNestLogger,
} from '../../test/support/nest-logs.js';
import { usePlainPostgres } from '../../test/support/plain-postgres.js';
import {
  newPlantJson,
  postPlant,
  uniqueId,
} from '../../test/support/plants.js';
import { eventually } from '../../test/support/poll.js';
import { connectError, RawConnections } from '../../test/support/raw-http.js';
import { useProcessFolder } from '../../test/support/temp-folder.js';
import { TOKEN } from '../../test/support/tokens.js';
import { startService } from './bootstrap.js';
import { runClusterPrimary } from './cluster.js';
import { stopWhenStdinCloses } from './lifecycle/stdin-close.js';
import { stopTracing } from './tracing/start-tracing.js';
import {
  handleStopSignals,
  type StopHandlers,
} from './lifecycle/stop-signals.js';

/** node:cluster as the service reads it: a primary, or a worker of WEB_CONCURRENCY. */
const clusterRole = vi.hoisted(() => ({ isPrimary: true }));
/** In the order they came: the process's exit and tracing's stop. */
const ends = vi.hoisted(() => [] as string[]);

vi.mock('node:cluster', () => ({ default: clusterRole }));
// The process's own: its signals, its standard input, its cluster, its tracing and its exit.
vi.mock('./lifecycle/stop-signals.js', () => ({ handleStopSignals: vi.fn() }));
vi.mock('./lifecycle/stdin-close.js', () => ({ stopWhenStdinCloses: vi.fn() }));
vi.mock('./cluster.js', () => ({ runClusterPrimary: vi.fn() }));
vi.mock('./tracing/start-tracing.js', async (original) => ({
  ...(await original<typeof import('./tracing/start-tracing.js')>()),
  stopTracing: vi.fn(() => {
    ends.push('tracing stopped');
    return Promise.resolve();
  }),
}));

describe('startService: the process, from its settings to its exit', () => {
  const postgres = usePlainPostgres();
  keepNestLogger();
  let logs: ReturnType<typeof captureNestLogs>;
  let written: string;
  let exited: Promise<number>;
  const connections = new RawConnections(() => port);
  let port = 0;

  beforeEach(() => {
    clusterRole.isPrimary = true;
    ends.length = 0;
    logs = captureNestLogs(['log', 'warn', 'error']);
    written = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      written += String(text);
      return true;
    });
    exited = new Promise((resolve) =>
      vi.spyOn(process, 'exit').mockImplementation(((code: number) => {
        ends.push(`exit ${code}`);
        resolve(code);
      }) as never),
    );
    for (const [name, value] of Object.entries({
      NODE_ENV: 'test',
      LOG_LEVEL: 'fatal',
      LOG_FORMAT: 'json',
      HTTP_ADAPTER: 'express',
      HOST: '127.0.0.1',
      PORT: '0',
      SHUTDOWN_DELAY_MS: '0',
      API_TOKENS: TOKEN,
      DATABASE_URL: postgres().url,
    }))
      vi.stubEnv(name, value);
  });
  afterEach(() => {
    connections.closeAll();
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    vi.mocked(handleStopSignals).mockReset();
    vi.mocked(stopWhenStdinCloses).mockReset();
    vi.mocked(runClusterPrimary).mockReset();
  });

  /** The service's connections to its database (its pool's and its token sync's). */
  async function serviceConnections(): Promise<number> {
    const client = new pg.Client({ connectionString: postgres().url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'plant-store%'",
      );
      return rows[0].n;
    } finally {
      await client.end();
    }
  }

  /** A create at work: past its token, waiting for its body (the 100 Continue says so). */
  async function createAtWork(body: string) {
    const running = await connections.open();
    running.write(
      'POST /plants HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${TOKEN}\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await running.until((text) => text.startsWith('HTTP/1.1 100 Continue'));
    return running;
  }

  /** The handlers the service gave for SIGTERM and SIGINT. */
  const signals = (): StopHandlers =>
    vi.mocked(handleStopSignals).mock.calls[0][0];
  const messages = () => logs.logged.map(([, message]) => message);
  /** The address it said it listens on, once it has. */
  const listening = () =>
    eventually('the service listening', () =>
      messages()
        .map((message) =>
          /^Plant Store listening on (.+):(\d+) \(Node\.js (\S+), on (\w+)\)$/.exec(
            String(message),
          ),
        )
        .find((match) => match !== null),
    ).then(([, host, listened, version, adapter]) => {
      port = Number(listened);
      return { host, port, version, adapter };
    });

  it('listens on HOST and PORT and says so; on a stop signal drains, closes, stops tracing, then exits 0', async () => {
    startService();
    const where = await listening();
    expect(where).toEqual({
      host: '127.0.0.1',
      port: expect.any(Number) as unknown,
      version: process.version,
      adapter: 'express',
    });
    const url = `http://127.0.0.1:${where.port}`;
    await eventually('the database up', async () =>
      (await fetch(`${url}/health/ready`)).status === 200 ? true : undefined,
    );
    const created = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
      token: TOKEN,
    });
    expect(created.status).toBe(200);
    expect(written).not.toContain('Development token');

    signals().stop('SIGTERM');
    expect(await exited).toBe(0);
    expect(ends).toEqual(['tracing stopped', 'exit 0']);
    expect(messages()).toContain(
      'SIGTERM received: draining requests, then closing the database',
    );
    expect(await connectError(where.port)).toBe('ECONNREFUSED');
    // The database closed too: none of its connections left.
    expect(await serviceConnections()).toBe(0);
    // One primary, one process: no workers, and standard input left alone unless asked.
    expect(runClusterPrimary).not.toHaveBeenCalled();
    expect(stopWhenStdinCloses).not.toHaveBeenCalled();
  });

  it('listens before its database answers: live, not ready', async () => {
    vi.stubEnv(
      'DATABASE_URL',
      'postgresql://postgres:secret@127.0.0.1:1/plant_store',
    );
    startService();
    const { port: listened } = await listening();
    const url = `http://127.0.0.1:${listened}`;
    expect((await fetch(`${url}/health/live`)).status).toBe(200);
    expect((await fetch(`${url}/health/ready`)).status).toBe(503);
    signals().stop('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('writes an IPv6 address in brackets, and serves on Fastify when told', async () => {
    vi.stubEnv('HOST', '::1');
    vi.stubEnv('HTTP_ADAPTER', 'fastify');
    startService();
    expect(await listening()).toMatchObject({
      host: '[::1]',
      adapter: 'fastify',
    });
    signals().stop('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('stopped while it starts, never listens, and exits 0 once closed', async () => {
    startService();
    signals().stop('SIGINT');
    // A second Ctrl+C, before there is anything to hurry.
    signals().hurry();
    expect(await exited).toBe(0);
    expect(
      messages().filter((message) => String(message).includes('listening')),
    ).toEqual([]);
    expect(messages()).toContain(
      'SIGINT received: draining requests, then closing the database',
    );
  });

  it('cuts the drain short on a second Ctrl+C', async () => {
    vi.stubEnv('SHUTDOWN_TIMEOUT_MS', '600000');
    startService();
    await listening();
    const running = await createAtWork(newPlantJson(uniqueId(), 'Fern'));
    signals().stop('SIGINT');
    signals().hurry();
    expect(await exited).toBe(0);
    await running.closed;
  });

  it('answers a create still at work when the stop comes before it exits', async () => {
    vi.stubEnv('SHUTDOWN_TIMEOUT_MS', '600000');
    startService();
    await listening();
    await eventually('the database up', async () =>
      (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200
        ? true
        : undefined,
    );
    const body = newPlantJson(uniqueId(), 'Fern');
    const running = await createAtWork(body);
    signals().stop('SIGTERM');
    running.write(body);
    const answer = await running.closed;
    expect(answer).toMatch(/\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(await exited).toBe(0);
  });

  it('says so and exits 1 when the shutdown fails', async () => {
    vi.mocked(stopTracing).mockRejectedValueOnce(new Error('exporter gone'));
    startService();
    await listening();
    signals().stop('SIGTERM');
    expect(await exited).toBe(1);
    expect(logs.logged).toContainEqual(['error', 'Shutdown failed']);
    expect(
      logs.details[
        logs.logged.findIndex(([, message]) => message === 'Shutdown failed')
      ],
    ).toEqual([expect.stringMatching(/^Error: exporter gone\n/)]);
  });

  it('refuses a setting by name, logs it once and exits 1, having started nothing', async () => {
    vi.stubEnv('PORT', 'eighty');
    startService();
    expect(await exited).toBe(1);
    expect(logs.logged).toEqual([
      ['error', expect.stringMatching(/^Invalid configuration: PORT /)],
    ]);
    expect([...logs.contexts]).toEqual(['PlantStore']);
    expect(handleStopSignals).not.toHaveBeenCalled();
  });

  /** What the service logged as its failed start, with the stack it gave. */
  const failedStart = () =>
    logs.logged.flatMap(([level, message], index) =>
      level === 'error' && message === 'The service failed to start'
        ? [String(logs.details[index][0])]
        : [],
    );

  it('logs a failed start with its stack, and exits 1', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    vi.stubEnv('PORT', String((taken.address() as { port: number }).port));
    const create = vi.spyOn(NestFactory, 'create');
    try {
      startService();
      expect(await exited).toBe(1);
      expect(failedStart()).toEqual([
        expect.stringMatching(/^Error: listen EADDRINUSE/),
      ]);
    } finally {
      taken.close();
      // The application it could not start: this process goes on, unlike the service's.
      await (await create.mock.results[0].value).close();
    }
  });

  it('closes and exits 1 when the database refuses it (not merely absent)', async () => {
    const refusing = new URL(postgres().url);
    refusing.password = 'not-the-password';
    vi.stubEnv('DATABASE_URL', refusing.toString());
    startService();
    expect(await exited).toBe(1);
    expect(failedStart()).toEqual([
      expect.stringContaining('password authentication failed'),
    ]);
  });

  describe("the service's logger, installed before its first line", () => {
    /** The lines the service's logger (nestjs-pino's, JSON lines) was given, and any other's. */
    let service: unknown[][];
    let elsewhere: unknown[][];
    beforeEach(() => {
      // Nest's lines where they are written, not where Logger's methods were called.
      for (const level of ['log', 'warn', 'error'] as const)
        vi.mocked(Logger.prototype[level]).mockRestore();
      service = [];
      elsewhere = [];
      for (const level of ['log', 'warn', 'error'] as const)
        vi.spyOn(ServiceLogger.prototype, level).mockImplementation(
          (message: unknown, ...rest: unknown[]) =>
            void service.push([level, message, rest.at(-1)]),
        );
      // Another logger in place before the start (Nest's own by default): none may reach it.
      const other =
        (level: string) =>
        (message: unknown): void =>
          void elsewhere.push([level, message]);
      Logger.overrideLogger({
        log: other('log'),
        warn: other('warn'),
        error: other('error'),
      });
    });

    it('writes a refused setting with it, on the defaults (LOG_FORMAT may be the one refused)', async () => {
      vi.stubEnv('PORT', 'eighty');
      startService();
      expect(await exited).toBe(1);
      expect(service).toEqual([
        [
          'error',
          expect.stringMatching(/^Invalid configuration: PORT /),
          'PlantStore',
        ],
      ]);
      expect(elsewhere).toEqual([]);
    });

    it('writes the warnings of former names with it, before any application exists', async () => {
      vi.stubEnv('WEB_CONCURRENCY', '2');
      vi.stubEnv('CREATE_QUEUE_LIMIT', '10');
      startService();
      await eventually('the workers started', () =>
        vi.mocked(runClusterPrimary).mock.calls.length > 0 ? true : undefined,
      );
      expect(service).toEqual([
        [
          'warn',
          expect.stringMatching(/^CREATE_QUEUE_LIMIT is deprecated/),
          'PlantStore',
        ],
      ]);
      expect(elsewhere).toEqual([]);
    });
  });

  it('as the primary of WEB_CONCURRENCY workers, runs them, watches standard input and warns of former names once', async () => {
    vi.stubEnv('WEB_CONCURRENCY', '2');
    vi.stubEnv('STOP_WHEN_STDIN_CLOSES', 'true');
    vi.stubEnv('CREATE_QUEUE_LIMIT', '10');
    startService();
    await eventually('the workers started', () =>
      vi.mocked(runClusterPrimary).mock.calls.length > 0 ? true : undefined,
    );
    expect(vi.mocked(runClusterPrimary).mock.calls[0][0]).toMatchObject({
      WEB_CONCURRENCY: 2,
    });
    expect(stopWhenStdinCloses).toHaveBeenCalledOnce();
    expect(handleStopSignals).not.toHaveBeenCalled();
    expect(logs.logged).toEqual([
      [
        'warn',
        'CREATE_QUEUE_LIMIT is deprecated: it sets INSERT_QUEUE_LIMIT where unset; use that name instead',
      ],
    ]);
  });

  it('as a worker, serves, leaving standard input and former names to the primary', async () => {
    clusterRole.isPrimary = false;
    vi.stubEnv('WEB_CONCURRENCY', '2');
    vi.stubEnv('STOP_WHEN_STDIN_CLOSES', 'true');
    vi.stubEnv('CREATE_QUEUE_LIMIT', '10');
    startService();
    await listening();
    expect(runClusterPrimary).not.toHaveBeenCalled();
    expect(stopWhenStdinCloses).not.toHaveBeenCalled();
    expect(logs.logged.filter(([level]) => level === 'warn')).toEqual([]);
    signals().stop('SIGTERM');
    expect(await exited).toBe(0);
  });

  describe('on its embedded PostgreSQL, with no token set', () => {
    // Its clusters in a folder of this process's own: one a killed worker left is removed.
    const folder = useProcessFolder('bootstrap-spec-');
    let dataDir: string;
    beforeEach(async () => {
      dataDir = await mkdtemp(join(folder(), 'data-'));
      await copyOfKitCluster(dataDir);
      vi.stubEnv('DATABASE_URL', undefined);
      vi.stubEnv('API_TOKENS', undefined);
      vi.stubEnv('DATA_DIR', dataDir);
      vi.stubEnv('EMBEDDED_DATABASE_PORT', String(await freePort()));
    });
    afterEach(() => rm(dataDir, { recursive: true, force: true }));

    it('prints no token when its database fails to start, and exits 1', async () => {
      // A cluster PostgreSQL refuses to start: no configuration in it.
      await rm(join(dataDir, 'postgres', 'postgresql.conf'));
      startService();
      expect(await exited).toBe(1);
      expect(failedStart()).toHaveLength(1);
      expect(written).not.toContain('Development token');
    });

    it.each([
      ['0.0.0.0', 'localhost'],
      ['::', 'localhost'],
      ['127.0.0.1', '127.0.0.1'],
    ])(
      'on %s, prints the development token and a create to try, which works, once the database is up',
      async (host, printed) => {
        const servicePort = await freePort();
        vi.stubEnv('HOST', host);
        vi.stubEnv('PORT', String(servicePort));
        startService();
        await eventually('the token printed', () =>
          written.includes('-d ') ? true : undefined,
        );
        const token = (
          await readFile(join(dataDir, 'dev-token'), 'utf8')
        ).trim();
        expect(written).toBe(
          [
            '',
            `Development token (kept in ${dataDir}/dev-token): ${token}`,
            'Try it:',
            `  curl -s -X POST http://${printed}:${servicePort}/plants \\`,
            `    -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\`,
            `    -d '{"id": 1, "name": "Monstera", "tag": "tropical"}'`,
            '',
            '',
          ].join('\n'),
        );
        const created = await postPlant(
          `http://127.0.0.1:${servicePort}`,
          '{"id": 1, "name": "Monstera", "tag": "tropical"}',
          { token },
        );
        expect(created.status).toBe(200);
        signals().stop('SIGTERM');
        expect(await exited).toBe(0);
      },
    );
  });
});
