import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { freePort } from '../../../test-kit/free-port.mjs';
import { validateEnvironment } from '../config/environment.js';
import { DatabaseServer } from './database-server.js';
import { embeddedDatabaseUrl } from './embedded-database-url.js';
import { pidIn } from './pid-files.js';
import { OWNER_FILE } from './stale-postmaster.js';

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  return client.connect().then(
    async () => {
      await client.end();
      return true;
    },
    () => false,
  );
}

/** The context Nest writes beside a line: the name a class gave its Logger. */
const contextOf = (logger: Logger): unknown =>
  (logger as unknown as { context?: string }).context;

describe('DatabaseServer: DATABASE_URL’s server, or an embedded one', () => {
  let logged: [string, string, unknown][];

  beforeEach(() => {
    logged = [];
    for (const level of ['log', 'debug', 'warn'] as const)
      vi.spyOn(Logger.prototype, level).mockImplementation(function (
        this: Logger,
        message: unknown,
      ) {
        logged.push([level, String(message), contextOf(this)]);
      });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers DATABASE_URL, and starts nothing', async () => {
    const server = new DatabaseServer(
      validateEnvironment({
        DATABASE_URL: 'postgres://u@db.example:5432/plants',
      }),
    );
    expect(await server.connectionUrl()).toBe(
      'postgres://u@db.example:5432/plants',
    );
    await server.onApplicationShutdown();
    expect(logged).toEqual([]);
  });

  describe('without DATABASE_URL', () => {
    let dataDir: string;
    let port: number;
    let server: DatabaseServer;

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'database-server-'));
      port = await freePort();
    });

    beforeEach(() => {
      server = new DatabaseServer(
        validateEnvironment({
          DATA_DIR: dataDir,
          EMBEDDED_DATABASE_PORT: String(port),
        }),
      );
    });

    afterEach(async () => {
      await server.onApplicationShutdown();
    }, 60_000);

    afterAll(async () => {
      await rm(dataDir, { recursive: true, force: true });
    });

    it('starts the embedded PostgreSQL once, in DATA_DIR on EMBEDDED_DATABASE_PORT, and stops it at shutdown', async () => {
      const url = await server.connectionUrl();
      const password = (
        await readFile(join(dataDir, 'postgres-password'), 'utf8')
      ).trim();
      expect(url).toBe(embeddedDatabaseUrl(password, port, 'plant_store'));
      expect(await answers(url)).toBe(true);
      expect(await server.connectionUrl()).toBe(url);
      expect(logged.filter(([level]) => level !== 'debug')).toEqual([
        [
          'log',
          `No DATABASE_URL: starting the embedded PostgreSQL on port ${port}`,
          'DatabaseServer',
        ],
      ]);
      // PostgreSQL's own lines, at debug level.
      expect(
        logged.some(
          ([level, line, context]) =>
            level === 'debug' &&
            context === 'DatabaseServer' &&
            line.includes('database system is ready to accept connections'),
        ),
      ).toBe(true);
      await server.onApplicationShutdown();
      expect(await answers(url)).toBe(false);
      // Asked again after shutdown, it starts again.
      expect(await server.connectionUrl()).toBe(url);
      expect(await answers(url)).toBe(true);
    }, 120_000);

    it('warns when it stopped a server left running by a process that is gone', async () => {
      const url = await server.connectionUrl();
      const stale = await pidIn(join(dataDir, 'postgres', 'postmaster.pid'));
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
      await once(child, 'exit');
      await writeFile(join(dataDir, OWNER_FILE), `${child.pid}\n`);
      const again = new DatabaseServer(
        validateEnvironment({
          DATA_DIR: dataDir,
          EMBEDDED_DATABASE_PORT: String(port),
        }),
      );
      logged = [];
      try {
        expect(await again.connectionUrl()).toBe(url);
        expect(logged.filter(([level]) => level === 'warn')).toEqual([
          [
            'warn',
            `Stopped a stale embedded PostgreSQL (pid ${stale}) left running in ${join(dataDir, 'postgres')} ` +
              `by a process that is gone (pid ${child.pid})`,
            'DatabaseServer',
          ],
        ]);
      } finally {
        await again.onApplicationShutdown();
      }
    }, 120_000);
  });
});
