import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  mkdir,
  mkdtemp,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../../test-kit/free-port.mjs';
import { copyOfKitCluster } from '../../../test/support/kit-template.js';
import { embeddedDatabaseUrl } from './embedded-database-url.js';
import { EmbeddedPostgresServer } from './embedded-postgres.js';
import { pidIn } from './pid-files.js';
import { OWNER_FILE } from './stale-postmaster.js';

/** The process's listeners by event: every event, whichever a library listens to. */
const listenerCounts = () =>
  Object.fromEntries(
    process
      .eventNames()
      .map((event) => [String(event), process.listenerCount(event)]),
  );

/** The rows `sql` returns over `url`. */
async function ask(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function answers(url: string): Promise<boolean> {
  return ask(url, 'SELECT 1').then(
    () => true,
    () => false,
  );
}

/** The pid of a process that has exited. */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

describe('EmbeddedPostgresServer: a real PostgreSQL in a data folder, kept across restarts', () => {
  let dataDir: string;
  let port: number;
  let servers: EmbeddedPostgresServer[];
  let logged: string[];
  let warned: string[];
  const options = (database = 'plant_store') => ({
    dataDir,
    port,
    database,
    onLog: (line: string) => logged.push(line),
    onWarning: (line: string) => warned.push(line),
  });
  const start = async (database?: string) => {
    const server = await EmbeddedPostgresServer.start(options(database));
    servers.push(server);
    return server;
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'embedded-postgres-'));
    port = await freePort();
    servers = [];
    logged = [];
    warned = [];
  });

  afterEach(async () => {
    for (const server of servers.reverse()) await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('makes a new cluster with the database asked for, as postgres on loopback, with a password kept in the data folder', async () => {
    const listenersBefore = listenerCounts();
    const server = await start('plant_store_embedded');
    const password = (
      await readFile(join(dataDir, 'postgres-password'), 'utf8')
    ).trim();
    expect(password).toMatch(/^[\w-]{32}$/);
    expect(server.url).toBe(
      embeddedDatabaseUrl(password, port, 'plant_store_embedded'),
    );
    expect(
      await ask(server.url, 'SELECT current_database(), current_user'),
    ).toEqual([
      { current_database: 'plant_store_embedded', current_user: 'postgres' },
    ]);
    // mkdtemp made it 0700; under root PostgreSQL runs as `postgres`, which must traverse it.
    expect((await stat(dataDir)).mode & 0o001).toBe(0o001);
    expect(await readFile(join(dataDir, OWNER_FILE), 'utf8')).toBe(
      `${process.pid}\n`,
    );
    // initdb's lines, then the server's, without their line ends.
    expect(
      logged.some((line) =>
        line.includes(
          'The files belonging to this database system will be owned by user',
        ),
      ),
    ).toBe(true);
    // The server's lines, without their line ends.
    expect(logged.filter((line) => line !== line.trimEnd())).toEqual([]);
    expect(
      logged.some((line) =>
        line.includes('database system is ready to accept connections'),
      ),
    ).toBe(true);
    // No listener of embedded-postgres left; one 'exit' listener is the server's own (PostgresProcess).
    expect(listenerCounts()).toEqual({
      ...listenersBefore,
      exit: (listenersBefore.exit ?? 0) + 1,
    });
    expect(warned).toEqual([]);
  }, 120_000);

  it('makes the cluster in a cluster folder left empty (an initdb cut short)', async () => {
    await mkdir(join(dataDir, 'postgres'));
    const server = await start();
    expect(await answers(server.url)).toBe(true);
  }, 120_000);

  it('shares a server another process started (`npm run token` beside `npm start`), and leaves it running when it stops', async () => {
    await copyOfKitCluster(dataDir);
    const first = await start();
    const shared = await start();
    expect(shared.url).toBe(first.url);
    await shared.stop();
    expect(await answers(first.url)).toBe(true);
    expect(warned).toEqual([]);
  }, 60_000);

  it('stops at stop(), and starts again on the same cluster with its data', async () => {
    await copyOfKitCluster(dataDir);
    const first = await start();
    await ask(
      first.url,
      'CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)',
    );
    await first.stop();
    expect(await answers(first.url)).toBe(false);
    const again = await start();
    expect(again.url).toBe(first.url);
    expect(await ask(again.url, 'SELECT n FROM kept')).toEqual([{ n: 7 }]);
    expect(warned).toEqual([]);
  }, 60_000);

  it('stops a server left running by a process that is gone, says so, and starts its own', async () => {
    await copyOfKitCluster(dataDir);
    await start();
    const stale = await pidIn(join(dataDir, 'postgres', 'postmaster.pid'));
    const gone = await endedPid();
    await writeFile(join(dataDir, OWNER_FILE), `${gone}\n`);
    const own = await start();
    expect(warned).toEqual([
      `Stopped a stale embedded PostgreSQL (pid ${stale}) left running in ${join(dataDir, 'postgres')} ` +
        `by a process that is gone (pid ${gone})`,
    ]);
    expect(await pidIn(join(dataDir, 'postgres', 'postmaster.pid'))).not.toBe(
      stale,
    );
    expect(await readFile(join(dataDir, OWNER_FILE), 'utf8')).toBe(
      `${process.pid}\n`,
    );
    expect(await answers(own.url)).toBe(true);
  }, 60_000);

  it('stops a stale server for a starter that takes no warnings too', async () => {
    await copyOfKitCluster(dataDir);
    await start();
    await writeFile(join(dataDir, OWNER_FILE), `${await endedPid()}\n`);
    const { onWarning: _ignored, ...quiet } = options();
    const own = await EmbeddedPostgresServer.start(quiet);
    servers.push(own);
    expect(await answers(own.url)).toBe(true);
  }, 60_000);

  it('says which port it could not start on, and what to set instead', async () => {
    await copyOfKitCluster(dataDir);
    // Both loopback addresses taken; a client is hung up on at once, so it is no server to share.
    const taken: Server = createServer((socket) => socket.destroy());
    taken.listen(port, '::');
    await once(taken, 'listening');
    try {
      await expect(start()).rejects.toThrow(
        new Error(
          `The embedded PostgreSQL did not start on port ${port} (is the port in use? ` +
            'set EMBEDDED_DATABASE_PORT, or DATABASE_URL to use another server).',
        ),
      );
    } finally {
      taken.close();
    }
  }, 60_000);
});
