import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { captureNestLines } from '../../../test/support/nest-logs.js';
import { eventually } from '../../../test/support/poll.js';
import { usePlainPostgres } from '../../../test/support/plain-postgres.js';
import { validateEnvironment } from '../config/environment.js';

/** Nest's levels before a test set others. */
const ALL_LEVELS = [
  'log',
  'error',
  'warn',
  'debug',
  'verbose',
  'fatal',
] as const;

/**
 * Runs the script (`npm run migration:run`) in this process. The first run imports it by name,
 * which tells Vitest (and Stryker, which runs the specs related to a mutated file) that this
 * spec runs it; later runs import a fresh copy, each its own module.
 */
let runs = 0;
const runScript = () => {
  runs += 1;
  if (runs === 1) return import('./migrate.js');
  const script = `./migrate.js?run=${runs}`;
  return import(/* @vite-ignore */ script);
};

describe('migrate: `npm run migration:run`', () => {
  const server = usePlainPostgres();
  let logged: [string, unknown, unknown][];
  let exit: ReturnType<typeof vi.fn>;

  beforeEach(() => {
    logged = captureNestLines(['log', 'error']);
    exit = vi.fn();
    vi.spyOn(process, 'exit').mockImplementation(
      exit as unknown as typeof process.exit,
    );
  });

  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    Logger.overrideLogger([...ALL_LEVELS]);
  });

  it('migrates DATABASE_URL at once, says so, and leaves the process to end', async () => {
    vi.stubEnv('DATABASE_URL', server().url);
    const create = vi.spyOn(NestFactory, 'createApplicationContext');
    await runScript();
    await eventually('the script done', () =>
      logged.some(([, message]) => message === 'The schema is up to date.')
        ? true
        : undefined,
    );
    expect(logged.at(-1)).toEqual([
      'log',
      'The schema is up to date.',
      'Migrations',
    ]);
    expect(logged.filter(([level]) => level === 'error')).toEqual([]);
    expect(exit).not.toHaveBeenCalled();
    const client = new pg.Client({ connectionString: server().url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM migrations',
      );
      expect(rows).toEqual([{ n: 4 }]);
    } finally {
      await client.end();
    }
    // Its own levels: what a migration says, without the debug lines. Read from what it asked
    // of Nest, not from Logger's levels: the unit specs share a process, and another spec's
    // application may set those at any time.
    expect(create.mock.calls.map(([, options]) => options)).toEqual([
      { abortOnError: false, logger: ['fatal', 'error', 'warn', 'log'] },
    ]);
  }, 60_000);

  it('logs what stopped it and exits with 1', async () => {
    vi.stubEnv('DATABASE_URL', server().url);
    vi.stubEnv('DATABASE_POOL_SIZE', 'many');
    const expected = (() => {
      try {
        validateEnvironment(process.env);
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(expected).toMatch(/^Invalid configuration: DATABASE_POOL_SIZE /);
    await runScript();
    await eventually('the exit', () =>
      exit.mock.calls.length > 0 ? true : undefined,
    );
    expect(exit.mock.calls).toEqual([[1]]);
    expect(logged).toEqual([['error', expected, 'Migrations']]);
  }, 60_000);
});
