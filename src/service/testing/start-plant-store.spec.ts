import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { watchedClock } from '../../../test/support/clock.js';
import {
  kitTemplate,
  linkedKitTemplate,
  templateWithoutConfiguration,
} from '../../../test/support/kit-template.js';
import { listening } from '../../../test/support/node-server.js';
import { signalsOnlyBelowThisProcess } from '../../../test/support/processes.js';
import { eventually } from '../../../test/support/poll.js';
import {
  newPlantJson,
  postPlant,
  uniqueId,
} from '../../../test/support/plants.js';
import {
  useProcessFolder,
  useTempFolder,
} from '../../../test/support/temp-folder.js';
import { DATABASE_STARTED_MESSAGE } from '../database/database-started-message.js';
import { isAlive } from '../database/pid-files.js';
import { SERVICE_V8_FLAGS } from '../v8-flags.js';
import { type SharedPostgres, startSharedPostgres } from './shared-postgres.js';
import {
  type PlantStoreOptions,
  type RunningPlantStore,
  startPlantStore,
} from './start-plant-store.js';
import { sparesOf } from './spare-clusters.js';
import { ManagedTokens } from './store-tokens.js';
import { defaultCacheDir } from './template-cluster.js';
import { tokenVerdict } from './token-verdict.js';

/** What this file's code spawned: the service and the keeper, run from dist/ (builtCopy). */
const spawned = vi.hoisted(
  () => [] as { args: string[]; options: SpawnOptions; child: ChildProcess }[],
);
/** Ports freePort hands out before its own: a test's taken ones. */
const nextPorts = vi.hoisted(() => [] as (number | undefined)[]);
/** What goes wrong, when a test says so: no build, a process killed as it starts, a keeper's orders garbled. */
const breakdown = vi.hoisted(() => ({
  noBuild: false,
  killed: undefined as 'service' | 'keeper' | undefined,
  garbledOrders: false,
  /** The killed keeper's end, which the service's start then waits for. */
  keeperGone: Promise.resolve() as Promise<unknown>,
}));

vi.mock('node:child_process', async (original) => {
  const actual = await original<typeof import('node:child_process')>();
  const { builtCopy } = await import('../../../test/support/built-files.js');
  return {
    ...actual,
    spawn: (command: string, args: string[], options: SpawnOptions) => {
      const built = args.map(builtCopy);
      const keeper = built[0].endsWith('database-keeper.js');
      if (keeper && breakdown.garbledOrders) built[1] = '{';
      const child = actual.spawn(command, built, options);
      spawned.push({ args: built, options, child });
      if (breakdown.killed === (keeper ? 'keeper' : 'service')) {
        if (keeper) breakdown.keeperGone = once(child, 'exit');
        child.kill('SIGKILL');
      }
      return child;
    },
  };
});
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  const { builtCopy } = await import('../../../test/support/built-files.js');
  return {
    ...actual,
    access: async (path: string, mode?: number) => {
      // The service spawns once the killed keeper is gone: its pipe closed for sure.
      await breakdown.keeperGone;
      return actual.access(breakdown.noBuild ? path : builtCopy(path), mode);
    },
  };
});
vi.mock('./free-port.js', async (original) => {
  const actual = await original<typeof import('./free-port.js')>();
  return {
    freePort: async () => nextPorts.shift() ?? actual.freePort(),
  };
});

const running = (child: ChildProcess) =>
  child.exitCode === null && child.signalCode === null;

/** The service's spawn (its bundle's main.mjs), the last one unless told. */
const services = () =>
  spawned.filter(({ args }) =>
    args.at(-1)!.endsWith('service-bundle/main.mjs'),
  );
const keepers = () =>
  spawned.filter(({ args }) => args[0].endsWith('database-keeper.js'));
const envOf = (index = -1) =>
  services().at(index)!.options.env as Record<string, string>;

/** What every service gets from startPlantStore, but for its port, token, id and database. */
const serviceSettings = () => ({
  PATH: process.env.PATH,
  NODE_COMPILE_CACHE: join(defaultCacheDir(), 'node-compile-cache'),
  AUTH_FAILURE_LIMIT: '1000000',
  SHUTDOWN_DELAY_MS: '0',
  NODE_ENV: 'test',
  LOG_FORMAT: 'json',
  HOST: '127.0.0.1',
  SHUTDOWN_TIMEOUT_MS: '5000',
  STOP_WHEN_STDIN_CLOSES: 'true',
  DATA_DIR: expect.stringMatching(/\/plant-store-test-[^/]+$/) as unknown,
});

async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A postmaster's state letter in /proc: T when stopped. */
function stateOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

/** A server on `port` that closes each connection at once, as a program that is no HTTP server. */
function listen(port: number): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** The status of a create with the store's token. */
async function create(
  store: RunningPlantStore,
  id = uniqueId(),
): Promise<number> {
  return (
    await postPlant(store.url, newPlantJson(id, 'Fern'), { token: store.token })
  ).status;
}

/** The error of a start that must fail. */
async function failedStart(options: PlantStoreOptions): Promise<Error> {
  try {
    const store = await startPlantStore(options);
    await store.stop();
  } catch (error) {
    return error as Error;
  }
  throw new Error('The start succeeded');
}

beforeEach(() => signalsOnlyBelowThisProcess());
afterEach(async () => {
  vi.restoreAllMocks();
  nextPorts.length = 0;
  Object.assign(breakdown, {
    noBuild: false,
    killed: undefined,
    garbledOrders: false,
    keeperGone: Promise.resolve(),
  });
  // What a failed test left: the service killed, each keeper's pipe closed (it then cleans up).
  for (const { args, child } of spawned.splice(0)) {
    if (!running(child)) continue;
    const exited = once(child, 'exit');
    if (args[0].endsWith('database-keeper.js')) child.stdin?.end();
    else child.kill('SIGKILL');
    await exited;
  }
}, 60_000);

/**
 * The temporary directory, and with it the cache folder, are this file's own while it runs:
 * the stores' folders, their sweep, the template and its spares stay in it, whatever a mutant
 * of the kit does with them. The template is the machine's, linked.
 */
const folder = useProcessFolder('start-plant-store-spec-');
const tmpdirBefore = process.env.TMPDIR;
beforeAll(async () => {
  const cache = join(folder(), basename(defaultCacheDir()));
  await mkdir(cache, { mode: 0o711 });
  await linkedKitTemplate(cache);
  process.env.TMPDIR = folder();
}, 120_000);
afterAll(() => {
  if (tmpdirBefore === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = tmpdirBefore;
});

describe(
  'startPlantStore: the built service for a test run',
  { timeout: 90_000 },
  () => {
    it('starts this instance on a PostgreSQL of its own, with a token, managed tokens, faults, and a stop that leaves nothing', async () => {
      const printed: string[] = [];
      const store = await startPlantStore({
        onOutput: (text) => printed.push(text),
      });
      const [{ args, options, child }] = services();
      const port = Number(new URL(store.url).port);
      expect(store.url).toBe(`http://127.0.0.1:${port}`);
      expect(args).toEqual([
        ...SERVICE_V8_FLAGS,
        expect.stringMatching(/\/dist\/service-bundle\/main\.mjs$/),
      ]);
      expect(options.stdio).toEqual(['pipe', 'pipe', 'pipe']);
      const env = envOf();
      // Its settings, and nothing else of this process's environment.
      expect(env).toEqual({
        ...serviceSettings(),
        PORT: String(port),
        API_TOKENS: store.token,
        INSTANCE_ID: store.instanceId,
        DATABASE_URL: store.databaseUrl,
      });
      expect(store.token).toMatch(/^pst_test_[\w-]{32}$/);
      await eventually('its ready line', () =>
        printed.join('').includes(DATABASE_STARTED_MESSAGE) ? true : undefined,
      );
      const dataDir = env.DATA_DIR;
      const postmaster = Number(
        readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split(
          '\n',
        )[0],
      );

      // This instance answers, and takes its token.
      expect(await (await fetch(`${store.url}/health`)).json()).toEqual({
        status: 'ok',
        instance: store.instanceId,
      });
      const id = uniqueId();
      expect(await create(store, id)).toBe(200);
      expect(
        await query(
          store.databaseUrl,
          'SELECT name FROM plants WHERE id = $1',
          [id.toString()],
        ),
      ).toEqual([{ name: 'Fern' }]);

      // reset() empties the plants, on a connection of its own.
      await store.reset();
      expect(
        await query(store.databaseUrl, 'SELECT count(*)::int AS n FROM plants'),
      ).toEqual([{ n: 0 }]);
      expect(
        await query(
          store.databaseUrl,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store-testing'",
        ),
      ).toEqual([{ n: 1 }]);

      // Managed tokens: accepted once create() resolves, refused once revoke() does.
      const managed = await store.tokens.create();
      expect((await tokenVerdict(store.url, managed)).accepted).toBe(true);
      await store.tokens.revoke(managed);
      expect((await tokenVerdict(store.url, managed)).accepted).toBe(false);

      // A database outage: the store's postmaster held still, then let go.
      const outage = await store.faults.databaseDown(60_000);
      await eventually('the postmaster stopped', () =>
        stateOf(postmaster) === 'T' ? true : undefined,
      );
      await outage.end();
      await outage.over;
      await eventually('the postmaster running again', () =>
        stateOf(postmaster) === 'T' ? undefined : true,
      );

      // stop(), once however often called: the service, its database and its folder gone.
      await store.faults.databaseDown(60_000);
      const stopping = store.stop();
      expect(store.stop()).toBe(stopping);
      await stopping;
      expect(running(child)).toBe(false);
      expect(child.signalCode ?? child.exitCode).toBe(0);
      expect(keepers().map(({ child: keeper }) => running(keeper))).toEqual([
        false,
      ]);
      expect(isAlive(postmaster)).toBe(false);
      expect(existsSync(dataDir)).toBe(false);
      await expect(fetch(`${store.url}/health`)).rejects.toThrow();
      // Once it served, its keeper made a spare for the next start, before it exited.
      expect(await readdir(sparesOf(await kitTemplate()))).toEqual(
        expect.arrayContaining([expect.stringMatching(/^ready-/)]),
      );
    });

    describe('its settings check, before anything is made', () => {
      const folder = useTempFolder('start-plant-store-');

      it.each(['fatal', 'error', 'warn'])(
        'refuses WEB_CONCURRENCY workers with LOG_LEVEL %s: their ready lines could not be counted',
        async (level) => {
          const cacheDir = join(folder(), 'cache');
          await expect(
            startPlantStore({
              env: { WEB_CONCURRENCY: '2', LOG_LEVEL: level },
              cacheDir,
            }),
          ).rejects.toThrow(
            new Error(
              'startPlantStore: WEB_CONCURRENCY above 1 needs LOG_LEVEL log (the default) or lower: ' +
                "the start counts each worker's ready line.",
            ),
          );
          expect(spawned).toEqual([]);
          expect(existsSync(cacheDir)).toBe(false);
        },
      );

      it.each([
        [{ WEB_CONCURRENCY: '2' }],
        [{ WEB_CONCURRENCY: '2', LOG_LEVEL: 'log' }],
        [{ WEB_CONCURRENCY: '3', LOG_LEVEL: 'debug' }],
        [{ WEB_CONCURRENCY: '1', LOG_LEVEL: 'warn' }],
        [{ LOG_LEVEL: 'error' }],
      ])(
        'lets %o through, to its cache folder (here one that cannot be made)',
        async (env) => {
          const file = join(folder(), 'a-file');
          await writeFile(file, '');
          await expect(
            startPlantStore({ env, cacheDir: join(file, 'cache') }),
          ).rejects.toThrow(/^ENOTDIR/);
        },
      );
    });

    /** A database no service can reach: a start on it never becomes ready. */
    const UNREACHABLE = 'postgresql://postgres:secret@127.0.0.1:1/plant_store';

    it('gives the service its options over its own settings, and one that is not ready in time is stopped, its folder removed', async () => {
      const attempts = [
        {
          options: {
            rateLimit: { requests: 5 },
            admission: { concurrency: 2 },
            env: { SHUTDOWN_TIMEOUT_MS: '1000', LOG_LEVEL: 'debug' },
          },
          set: {
            TOKEN_RATE_LIMIT: '5',
            CREATE_CONCURRENCY_LIMIT: '2',
            CREATE_WAITING_LIMIT: '0',
            SHUTDOWN_TIMEOUT_MS: '1000',
            LOG_LEVEL: 'debug',
          },
        },
        {
          options: {
            rateLimit: { requests: 7, windowMs: 2_000 },
            admission: { concurrency: 3, waiting: 4 },
          },
          set: {
            TOKEN_RATE_LIMIT: '7',
            TOKEN_RATE_WINDOW_MS: '2000',
            CREATE_CONCURRENCY_LIMIT: '3',
            CREATE_WAITING_LIMIT: '4',
          },
        },
      ];
      for (const { options, set } of attempts) {
        let printed = '';
        const error = await failedStart({
          ...options,
          databaseUrl: UNREACHABLE,
          startTimeoutMs: 1,
          onOutput: (text) => (printed += text),
        });
        const env = envOf();
        expect(env).toEqual({
          ...serviceSettings(),
          PORT: expect.stringMatching(/^\d+$/),
          API_TOKENS: expect.stringMatching(/^pst_test_/),
          INSTANCE_ID: expect.stringMatching(/^[0-9a-f-]{36}$/),
          DATABASE_URL: UNREACHABLE,
          ...set,
        });
        expect(error.message).toBe(
          `Plant Store did not become ready at http://127.0.0.1:${env.PORT} (timed out). It printed:\n${printed}`,
        );
        expect(running(services().at(-1)!.child)).toBe(false);
        expect(existsSync(env.DATA_DIR)).toBe(false);
      }
      expect(services()).toHaveLength(2);
    });

    it('says how a service that exited ended and what it printed, and stops its database', async () => {
      const error = await failedStart({
        env: { LOG_LEVEL: 'nonsense' },
      });
      expect(error.message).toMatch(
        /^Plant Store did not become ready at http:\/\/127\.0\.0\.1:\d+ \(exited 1\)\. It printed:\n.*LOG_LEVEL/s,
      );
      // Not a taken port: tried once.
      expect(services()).toHaveLength(1);
      expect(keepers().map(({ child }) => running(child))).toEqual([false]);
      expect(existsSync(envOf().DATA_DIR)).toBe(false);
    });

    it('says what a service killed as it starts died of, and what Node wrote to its error stream', async () => {
      breakdown.killed = 'service';
      expect((await failedStart({ databaseUrl: UNREACHABLE })).message).toMatch(
        /^Plant Store did not become ready at http:\/\/127\.0\.0\.1:\d+ \(exited SIGKILL\)\. It printed:\n$/,
      );
      breakdown.killed = undefined;
      const refused = await failedStart({
        databaseUrl: UNREACHABLE,
        env: { NODE_OPTIONS: '--no-such-option' },
      });
      expect(refused.message).toMatch(
        /\(exited 9\)\. It printed:\n.*--no-such-option is not allowed in NODE_OPTIONS/s,
      );
    });

    it('says what a keeper that died before its database was up printed, and its exit', async () => {
      // Orders it cannot read: it fails as it loads, with a stack on its error stream.
      breakdown.garbledOrders = true;
      const garbled = await failedStart({});
      expect(garbled.message).toMatch(
        /\(The store's keeper exited \(1\):\n.*SyntaxError.*\)\. It printed:\n/s,
      );
      breakdown.garbledOrders = false;
      // Killed before the service started: the pipe the start writes the service's pid to is closed.
      breakdown.killed = 'keeper';
      const killed = await failedStart({});
      expect(killed.message).toMatch(
        /\(The store's keeper exited \(null\):\n\)\. It printed:\n/,
      );
      expect(services().map(({ child }) => running(child))).toEqual([
        false,
        false,
      ]);
    });

    it('says where the build is missing, and how to make it', async () => {
      breakdown.noBuild = true;
      const main = fileURLToPath(
        new URL('../../service-bundle/main.mjs', import.meta.url),
      );
      expect((await failedStart({ databaseUrl: UNREACHABLE })).message).toBe(
        `startPlantStore: ${main} is missing: \`npm run build\` makes it (nest build, then scripts/bundle-service.mjs).`,
      );
      expect(services()).toEqual([]);
    });

    it('says why its database did not start, as the keeper said it', async () => {
      // A template PostgreSQL refuses (no configuration), where the store looks for one.
      const cacheDir = await mkdtemp(
        join(folder(), 'start-plant-store-cache-'),
      );
      try {
        await templateWithoutConfiguration(
          join(cacheDir, basename(await kitTemplate())),
        );
        const error = await failedStart({ cacheDir });
        expect(error.message).toMatch(
          /^Plant Store did not become ready at http:\/\/127\.0\.0\.1:\d+ \(The store's PostgreSQL did not start:\npostgres: could not access the server configuration file ".*\/postgres\/postgresql\.conf": No such file or directory\)\. It printed:\n/,
        );
        expect(services()).toHaveLength(1);
        expect(running(services()[0].child)).toBe(false);
        expect(existsSync(envOf().DATA_DIR)).toBe(false);
        // The run's shared server, from that template: the same, and nothing left of it.
        await expect(startSharedPostgres({ cacheDir })).rejects.toThrow(
          /^The store's PostgreSQL did not start:\npostgres: could not access the server configuration file/,
        );
        expect(keepers().map(({ child }) => running(child))).toEqual([
          false,
          false,
        ]);
        expect(
          (await readdir(folder())).filter((name) =>
            name.startsWith('plant-store-test-'),
          ),
        ).toEqual([]);
      } finally {
        await rm(cacheDir, { recursive: true, force: true });
      }
    });

    describe('on a port taken in the meantime', () => {
      let taken: Server[] = [];
      afterEach(async () => {
        await Promise.all(
          taken.map(
            (server) => new Promise((resolve) => server.close(resolve)),
          ),
        );
        taken = [];
      });
      /** A port something else listens on. */
      async function takenPort(): Promise<number> {
        const server = await listen(0);
        taken.push(server);
        return (server.address() as { port: number }).port;
      }

      it('starts again on fresh ports', async () => {
        // The database's port, then the service's: that one taken.
        nextPorts.push(undefined, await takenPort());
        const store = await startPlantStore();
        try {
          expect(services()).toHaveLength(2);
          expect(envOf(0).PORT).toBe(
            String((taken[0].address() as { port: number }).port),
          );
          expect(await (await fetch(`${store.url}/health`)).json()).toEqual({
            status: 'ok',
            instance: store.instanceId,
          });
        } finally {
          await store.stop();
        }
      });

      it('three times at most, then says why', async () => {
        for (let attempt = 0; attempt < 3; attempt += 1)
          nextPorts.push(await takenPort());
        const error = await failedStart({
          databaseUrl: UNREACHABLE,
          startTimeoutMs: 20_000,
        });
        expect(services()).toHaveLength(3);
        expect(error.message).toMatch(
          /\(exited 1\)\. It printed:\n.*EADDRINUSE/s,
        );
      });
    });

    it('on a shared PostgreSQL, gives each store a database of its own, dropped at its stop; on a database given, uses that one and keeps it', async () => {
      const shared: SharedPostgres = await startSharedPostgres();
      try {
        const databases = async () =>
          (
            await query<{ datname: string }>(
              shared.url,
              "SELECT datname FROM pg_database WHERE datname LIKE 'plant_store_%'",
            )
          ).map(({ datname }) => datname);
        const before = await databases();

        const own = await startPlantStore({ sharedPostgres: shared.url });
        const ownUrl = new URL(own.databaseUrl);
        const name = ownUrl.pathname.slice(1);
        expect(name).toMatch(/^plant_store_[0-9a-f]{12}$/);
        expect(ownUrl.host).toBe(new URL(shared.url).host);
        expect(await databases()).toEqual([...before, name].sort());
        expect(await create(own)).toBe(200);
        await expect(own.faults.databaseDown(10)).rejects.toThrow(
          'databaseDown() stops the embedded PostgreSQL of a store: start the store without databaseUrl.',
        );
        await own.stop();
        expect(await databases()).toEqual(before);

        // WEB_CONCURRENCY workers: resolved once each has said it is ready.
        const lines: string[] = [];
        const workers = await startPlantStore({
          sharedPostgres: shared.url,
          env: { WEB_CONCURRENCY: '2' },
          onOutput: (text) => lines.push(text),
        });
        expect(lines.join('').split(DATABASE_STARTED_MESSAGE)).toHaveLength(3);
        await workers.stop();
        expect(await databases()).toEqual(before);

        // A start that fails drops its database too.
        await expect(
          startPlantStore({
            sharedPostgres: shared.url,
            env: { LOG_LEVEL: 'nonsense' },
          }),
        ).rejects.toThrow(/exited 1/);
        expect(await databases()).toEqual(before);

        // A database of the suite's own: used as it is, and kept with its rows.
        const given = new URL(shared.url);
        given.pathname = '/suite_database';
        await query(shared.url, 'CREATE DATABASE suite_database');
        const store = await startPlantStore({ databaseUrl: given.toString() });
        expect(store.databaseUrl).toBe(given.toString());
        // reset()'s connection opened, then a row the database keeps.
        await store.reset();
        const id = uniqueId();
        expect(await create(store, id)).toBe(200);
        await store.tokens.create();
        await store.stop();
        expect(
          await query(given.toString(), 'SELECT id::text FROM plants'),
        ).toEqual([{ id: id.toString() }]);
        expect(existsSync(envOf().DATA_DIR)).toBe(false);
        // Its connections, reset()'s and the managed tokens', closed with it.
        expect(
          await query(
            shared.url,
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'suite_database'",
          ),
        ).toEqual([{ n: 0 }]);
        // A managed token, named as the kit's.
        expect(
          await query(given.toString(), 'SELECT name FROM api_tokens'),
        ).toEqual([{ name: expect.stringMatching(/^testing-[0-9a-f]{12}$/) }]);

        // A service that never takes a token change: create() gives up after 10 s, saying so.
        let asked = 0;
        const refusing = await listening((_request, response) => {
          asked += 1;
          response.writeHead(401).end();
        });
        const tokens = new ManagedTokens(given.toString(), refusing.url);
        let clock: ReturnType<typeof watchedClock> | undefined;
        try {
          await expect(tokens.revoke('pst_not-made-here')).rejects.toThrow(
            'revoke() takes a token that tokens.create() of this store made.',
          );
          clock = watchedClock();
          const creating = tokens.create();
          await eventually('two answers', () =>
            asked >= 2 ? true : undefined,
          );
          clock.advance(10_001);
          await expect(creating).rejects.toThrow(
            'The service did not take the token change within 10 s.',
          );
        } finally {
          clock?.restore();
          await tokens.close();
          await refusing.close();
        }
      } finally {
        await shared.stop();
      }
      await expect(query(shared.url, 'SELECT 1')).rejects.toThrow();
    });
  },
);
