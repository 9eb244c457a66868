import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { eventually } from '../../../test/support/poll.js';

// The CLI runs its command as the module loads (it is the bin), so each test imports it
// afresh with its own arguments. Its database is a fake DataSource holding an api_tokens
// table in memory: what the CLI prints is the subject here, not SQL (token-cli.e2e-spec.ts
// runs the built bin on PostgreSQL).
const database = vi.hoisted(() => ({
  /** The options the CLI asked databaseConnection for, one entry per run. */
  asked: [] as unknown[],
  /** Set once Nest closed the CLI's context. */
  closed: false,
  /** Thrown by every statement when set. */
  failure: undefined as unknown,
  /** Thrown by the connection, as Nest builds the CLI's context, when set. */
  connectFailure: undefined as Error | undefined,
  rows: [] as Row[],
  /** The database's clock: created_at of new rows. */
  now: new Date(0),
}));

interface Row {
  name: string;
  tokenHash: Buffer;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

vi.mock('../database/database.module.js', async () => {
  const { DataSource } = await import('typeorm');
  const failIfAsked = (): void => {
    if (database.failure !== undefined) throw database.failure;
  };
  const table = {
    createQueryBuilder: () => {
      let inserted: Omit<Row, 'createdAt' | 'revokedAt'>;
      const builder = {
        insert: () => builder,
        values: (values: typeof inserted) => ((inserted = values), builder),
        orIgnore: () => builder,
        returning: () => builder,
        execute: async () => {
          failIfAsked();
          if (database.rows.some((row) => row.name === inserted.name))
            return { raw: [] };
          const row = { ...inserted, createdAt: database.now, revokedAt: null };
          database.rows.push(row);
          return { raw: [{ created_at: row.createdAt }] };
        },
      };
      return builder;
    },
    create: (row: Row) => ({ ...row }),
    find: async () => {
      failIfAsked();
      return database.rows.map((row) => ({ ...row }));
    },
    update: async ({ name }: { name: string }, { revokedAt }: Row) => {
      failIfAsked();
      const active = database.rows.filter(
        (row) => row.name === name && row.revokedAt === null,
      );
      for (const row of active) row.revokedAt = revokedAt;
      return { affected: active.length };
    },
  };
  class FakeDataSource {
    readonly options = { type: 'postgres' };
    readonly entityMetadatas = [];
    getRepository() {
      return table;
    }
    // The last of the hooks Nest's close() calls.
    onApplicationShutdown() {
      database.closed = true;
    }
  }
  class FakeDatabaseModule {}
  return {
    databaseConnection: (options: unknown) => {
      database.asked.push(options);
      return {
        module: FakeDatabaseModule,
        global: true,
        providers: [
          {
            provide: DataSource,
            useFactory: () => {
              if (database.connectFailure !== undefined)
                throw database.connectFailure;
              return new FakeDataSource();
            },
          },
        ],
        exports: [DataSource],
      };
    },
  };
});

const BIN = join(process.cwd(), 'dist/service/cli/token.js');

interface Run {
  /** The first exit code it asked for; undefined when it ended without process.exit. */
  code: number | undefined;
  stdout: string;
  stderr: string;
}

const argv = process.argv;
let stdout: string;
let stderr: string;
let code: number | undefined;
let exits: number;

beforeEach(() => {
  Object.assign(database, {
    asked: [],
    failure: undefined,
    connectFailure: undefined,
    rows: [],
    now: new Date('2026-03-01T12:00:00.000Z'),
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
    stdout += String(text);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
    stderr += String(text);
    return true;
  });
  vi.spyOn(process, 'exit').mockImplementation(((exitCode?: number) => {
    code ??= exitCode;
    exits += 1;
  }) as never);
  vi.stubEnv('npm_lifecycle_event', undefined);
  vi.useFakeTimers({
    toFake: ['Date'],
    now: new Date('2026-03-02T08:30:00.000Z'),
  });
});

afterEach(() => {
  process.argv = argv;
  vi.useRealTimers();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** Runs the CLI as `node <BIN> ...args`, until it exits or closes its database. */
async function token(...args: string[]): Promise<Run> {
  process.argv = [process.execPath, BIN, ...args];
  return runLoaded();
}

async function runLoaded(): Promise<Run> {
  stdout = '';
  stderr = '';
  code = undefined;
  exits = 0;
  database.closed = false;
  vi.resetModules();
  await import('./token.js');
  await eventually('the CLI to finish', () =>
    exits > 0 || database.closed ? true : undefined,
  );
  // What follows the close (the catch that exits) runs before the next turn of the loop.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout, stderr };
}

const usage = (command: string): string =>
  `Usage:
  ${command} create --name <name> [--expires-in <n>d|h|m]
  ${command} list
  ${command} revoke <name>
Works on DATABASE_URL, or on the embedded database when it is unset. With
--schema <schema>, on the tables of an application whose DataSource has that schema.
`;

const row = (name: string, more: Partial<Row> = {}): Row => ({
  name,
  tokenHash: Buffer.alloc(32),
  createdAt: new Date('2026-01-05T10:00:00.000Z'),
  expiresAt: null,
  revokedAt: null,
  ...more,
});

describe('the token CLI', () => {
  describe('its usage', () => {
    it.each([
      ['no command', []],
      ['an unknown command', ['rotate', '--name', 'ci']],
    ])(
      'answers %s with the usage, named as it was run, and exit code 2, before any database',
      async (_case, args) => {
        expect(await token(...args)).toEqual({
          code: 2,
          stdout: '',
          stderr: usage('node dist/service/cli/token.js'),
        });
        expect(database.asked).toEqual([]);
      },
    );

    it('names the npm script when run by it, and the file when no path is known', async () => {
      vi.stubEnv('npm_lifecycle_event', 'token');
      expect((await token()).stderr).toBe(usage('npm run token --'));

      vi.stubEnv('npm_lifecycle_event', undefined);
      process.argv = [process.execPath];
      expect((await runLoaded()).stderr).toBe(usage('node token.js'));
    });

    it('refuses an option it does not know, with the error as it is and exit code 1', async () => {
      const { code, stdout, stderr } = await token('list', '--verbose');
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toMatch(
        /^TypeError: Unknown option '--verbose'.*\n {4}at /,
      );
    });

    it('stops on an invalid setting with its message and stack, and exit code 1, before any database', async () => {
      vi.stubEnv('PORT', 'eighty');
      const { code, stdout, stderr } = await token('list');
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toMatch(
        /^ConfigurationError: Invalid configuration: PORT must be an integer from 0 to 65535\.\n {4}at .*\n$/s,
      );
      expect(database.asked).toEqual([]);
    });
  });

  describe('create', () => {
    it('creates a token without expiry, shows it once, and ends without an exit code', async () => {
      const run = await token('create', '--name', 'ci.deploy-1');
      const [created, shown, secret, ...rest] = run.stdout.split('\n');
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: undefined,
        stderr: '',
      });
      expect([created, shown, rest]).toEqual([
        'Created token "ci.deploy-1", no expiry.',
        'It is shown this once; only its hash is stored:',
        [''],
      ]);
      expect(secret).toMatch(/^pst_[\w-]{43}$/);
      expect(database.rows).toEqual([
        row('ci.deploy-1', {
          tokenHash: expect.any(Buffer) as Buffer,
          createdAt: database.now,
        }),
      ]);
      expect(database.asked).toEqual([{ migrate: false, schema: undefined }]);
      expect(database.closed).toBe(true);
    });

    it.each([
      ['90d', '2026-05-31T08:30:00.000Z'],
      ['12h', '2026-03-02T20:30:00.000Z'],
      ['30m', '2026-03-02T09:00:00.000Z'],
    ])(
      'gives --expires-in %s as an expiry from now, %s',
      async (expiresIn, expiresAt) => {
        const run = await token(
          'create',
          '--expires-in',
          expiresIn,
          '--name',
          'ci',
        );
        expect(run.stdout.split('\n')[0]).toBe(
          `Created token "ci", expires ${expiresAt}.`,
        );
        expect(database.rows.map((row) => row.expiresAt)).toEqual([
          new Date(expiresAt),
        ]);
      },
    );

    it.each([
      ['no --name', ['create']],
      ['a --name with a space', ['create', '--name', 'bad name']],
      ['a --name past 64 characters', ['create', '--name', 'n'.repeat(65)]],
    ])('refuses %s with exit code 2', async (_case, args) => {
      expect(await token(...args)).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'create needs --name: 1 to 64 letters, digits, dots, dashes or underscores.\n',
      });
      expect(database.rows).toEqual([]);
    });

    it.each(['soon', '0d', '1w'])(
      'refuses --expires-in %s with exit code 2',
      async (expiresIn) => {
        expect(
          await token('create', '--name', 'ci', '--expires-in', expiresIn),
        ).toEqual({
          code: 2,
          stdout: '',
          stderr: '--expires-in takes a number and a unit: 90d, 12h or 30m.\n',
        });
        expect(database.rows).toEqual([]);
      },
    );

    it('refuses a name that is taken, with exit code 2', async () => {
      database.rows.push(row('ci'));
      expect(await token('create', '--name', 'ci')).toEqual({
        code: 2,
        stdout: '',
        stderr: 'A token named ci exists already.\n',
      });
    });
  });

  describe('list', () => {
    it('says so when there is no managed token', async () => {
      expect(await token('list')).toEqual({
        code: undefined,
        stdout: 'No managed tokens.\n',
        stderr: '',
      });
    });

    it('lists every token in columns as wide as their widest cell, with its state now', async () => {
      database.rows.push(
        row('ci'),
        row('a-much-longer-name', {
          expiresAt: new Date('2026-03-02T08:30:00.000Z'),
        }),
        row('nightly', {
          expiresAt: new Date('2026-03-02T08:30:00.001Z'),
          revokedAt: new Date('2026-02-01T00:00:00.000Z'),
        }),
        row('preview', { expiresAt: new Date('2026-03-02T08:30:00.001Z') }),
      );
      expect(await token('list')).toEqual({
        code: undefined,
        stdout: [
          'NAME                CREATED                   EXPIRES                   STATE',
          'ci                  2026-01-05T10:00:00.000Z  never                     active',
          'a-much-longer-name  2026-01-05T10:00:00.000Z  2026-03-02T08:30:00.000Z  expired',
          'nightly             2026-01-05T10:00:00.000Z  2026-03-02T08:30:00.001Z  revoked',
          'preview             2026-01-05T10:00:00.000Z  2026-03-02T08:30:00.001Z  active',
          '',
        ].join('\n'),
        stderr: '',
      });
    });

    it('widens a column to its title when every cell is narrower', async () => {
      vi.setSystemTime(new Date('2026-01-01T00:00:00.000Z'));
      database.rows.push(row('a', { revokedAt: new Date(0) }));
      expect((await token('list')).stdout).toBe(
        [
          'NAME  CREATED                   EXPIRES  STATE',
          'a     2026-01-05T10:00:00.000Z  never    revoked',
          '',
        ].join('\n'),
      );
    });
  });

  describe('revoke', () => {
    it('revokes the active token of that name', async () => {
      database.rows.push(row('ci'), row('other'));
      expect(await token('revoke', 'ci')).toEqual({
        code: undefined,
        stdout:
          'Revoked "ci". Every running replica refuses it within a second (docs/tokens.md).\n',
        stderr: '',
      });
      expect(database.rows.map((row) => row.revokedAt)).toEqual([
        new Date('2026-03-02T08:30:00.000Z'),
        null,
      ]);
    });

    it.each([
      ['no name', [], 'revoke needs the name of a token.\n'],
      [
        'a name no active token has',
        ['gone'],
        'No active token is named "gone".\n',
      ],
    ])('refuses %s with exit code 2', async (_case, args, message) => {
      database.rows.push(row('gone', { revokedAt: new Date(0) }));
      expect(await token('revoke', ...args)).toEqual({
        code: 2,
        stdout: '',
        stderr: message,
      });
    });
  });

  describe('its database', () => {
    const missingTable = Object.assign(
      new Error('relation "api_tokens" does not exist'),
      { code: '42P01' },
    );

    it.each([['create', '--name', 'ci'], ['list'], ['revoke', 'ci']])(
      'says where it looked for a missing api_tokens table, with exit code 1 (%s)',
      async (...args) => {
        database.failure = missingTable;
        expect(await token(...args)).toEqual({
          code: 1,
          stdout: '',
          stderr:
            "No api_tokens table on the search_path: the application's migrations (PLANT_STORE_MIGRATIONS) make it. If its DataSource has a schema, give it with --schema.\n",
        });
        expect(database.closed).toBe(true);
      },
    );

    it('names the schema given with --schema, where it looked', async () => {
      database.failure = missingTable;
      expect(await token('list', '--schema', 'shop')).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'No api_tokens table in schema "shop": the application\'s migrations (PLANT_STORE_MIGRATIONS) make it. Is it the schema of its DataSource?\n',
      });
      expect(database.asked).toEqual([{ migrate: false, schema: 'shop' }]);
    });

    it('ends on any other failure with its stack and exit code 1, after closing the database', async () => {
      const failure = new Error('connection refused');
      database.failure = failure;
      expect(await token('list')).toEqual({
        code: 1,
        stdout: '',
        stderr: `${failure.stack}\n`,
      });
      expect(database.closed).toBe(true);
    });

    it('ends on a failed connection with the error Nest logs, then its stack, and exit code 1', async () => {
      const failure = new Error('connect ECONNREFUSED 127.0.0.1:5432');
      database.connectFailure = failure;
      const run = await token('list');
      expect({ code: run.code, stdout: run.stdout }).toEqual({
        code: 1,
        stdout: '',
      });
      // Nest logs what stopped it (the CLI keeps its errors and warnings); the CLI exits.
      expect(stripVTControlCharacters(run.stderr)).toContain(
        `ERROR [ExceptionHandler] Error: ${failure.message}`,
      );
      expect(run.stderr.endsWith(`\n${failure.stack}\n`)).toBe(true);
      expect(exits).toBe(1);
    });

    it('writes a failure that is not an Error as it is', async () => {
      database.failure = 'the server said no';
      expect(await token('list')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'the server said no\n',
      });
    });
  });
});
