import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import pg from 'pg';
import { TOKEN_SYNC_APPLICATION_NAME } from '../../src/lib/managed-tokens/active-tokens.store.js';
import { hashToken } from '../../src/lib/managed-tokens/token-hash.js';
import { tokenVerdict } from '../../src/service/testing/token-verdict.js';
import { Ledger } from '../support/reliability/ledger.js';
import { startLoad } from '../support/reliability/load.js';
import {
  type RunningService,
  startService,
  TOKEN,
  useTestPostgres,
} from '../support/reliability/scenario.js';

/** The promise (docs/tokens.md): a change reaches every replica within this. */
const REACHES_EVERY_REPLICA_MS = 1_000;
// Each round starts the CLI twice (a Nest application: seconds under load).
const ROUNDS = 2;
const LOAD_CLIENTS_PER_INSTANCE = 8;
// Far past the test's own failures: the polls below are failed authentication too.
const NO_FAILURE_LIMIT = '1000000';

/** `tokenVerdict`, where any answer but 400 or 401 is a failure of the scenario. */
async function accepted(url: string, token: string): Promise<boolean> {
  const { accepted, status } = await tokenVerdict(url, token);
  if (status !== 400 && status !== 401)
    throw new Error(`Unexpected ${status} while polling a token`);
  return accepted === true;
}

/** Polls `url` back to back until the token is (or is no longer) accepted; when it was. */
async function whenAccepted(
  url: string,
  token: string,
  wanted: boolean,
  deadline: number,
): Promise<number> {
  while (performance.now() < deadline) {
    if ((await accepted(url, token)) === wanted) return performance.now();
  }
  throw new Error(`${url} never ${wanted ? 'accepted' : 'refused'} the token`);
}

interface CliRun {
  /** The line saying the change was made (printed after its commit), and when it was read. */
  reported: Promise<{ at: number; line: string }>;
  exited: Promise<number>;
}

/** `npm run token -- <args>` minus the build: the built CLI, timed from its output. */
function tokenCli(
  databaseUrl: string,
  args: string[],
  reportedLine: RegExp,
): CliRun {
  const child = spawn(
    process.execPath,
    [resolve('dist/service/cli/token.js'), ...args],
    {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: databaseUrl,
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  const exited = new Promise<number>((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0
        ? done(performance.now())
        : fail(
            new Error(`token ${args.join(' ')} failed: ${lines.join('\n')}`),
          ),
    );
  });
  const reported = new Promise<{ at: number; line: string }>((done, fail) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (reportedLine.test(line)) done({ at: performance.now(), line });
    });
    exited.then(
      () =>
        fail(
          new Error(`token ${args.join(' ')} never printed ${reportedLine}`),
        ),
      fail,
    );
  });
  return { reported, exited };
}

const ms = (value: number) => Math.max(0, Math.round(value));

describe('a token created or revoked, on two instances under load', () => {
  const own = useTestPostgres('reliability-token-sync');
  let services: RunningService[];
  let sql: pg.Client;

  beforeAll(async () => {
    const { postgres } = own;
    services = [];
    for (let index = 0; index < 2; index += 1)
      services.push(
        await startService(postgres.url, {
          AUTH_FAILURE_LIMIT: NO_FAILURE_LIMIT,
        }),
      );
    sql = new pg.Client({ connectionString: postgres.url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    for (const service of services ?? []) await service.process.stop();
  });

  /** Both instances under closed-loop creates while `scenario` runs; then the ledger. */
  async function underLoad<T>(label: string, scenario: () => Promise<T>) {
    const ledger = new Ledger(label);
    const loads = services.map((service) =>
      startLoad({
        baseUrl: service.url,
        token: TOKEN,
        ledger,
        concurrency: LOAD_CLIENTS_PER_INSTANCE,
      }),
    );
    try {
      return await scenario();
    } finally {
      for (const load of loads) await load.stop();
      const figures = await ledger.verify(own.postgres.url);
      expect(figures.acknowledged).toBeGreaterThan(0);
      expect(figures.lost).toBe(0);
      expect(figures.duplicated).toBe(0);
    }
  }

  it('reaches both within 1 s: npm run token -- create, then revoke', async () => {
    const created: number[] = [];
    const revoked: number[] = [];
    const revokedAfterExit: number[] = [];
    await underLoad('creates during token changes', async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const name = `sync-${round}-${Date.now()}`;
        const create = tokenCli(
          own.postgres.url,
          ['create', '--name', name],
          /^pst_/,
        );
        // Polled as soon as the token is printed, while the command is still ending.
        const { at: printed, line: token } = await create.reported;
        const deadline = performance.now() + 30_000;
        for (const at of await Promise.all(
          services.map((service) =>
            whenAccepted(service.url, token, true, deadline),
          ),
        ))
          created.push(at - printed);
        await create.exited;

        // Polled from before the command starts, so the refusal is seen as it lands.
        const polls = services.map((service) =>
          whenAccepted(service.url, token, false, performance.now() + 30_000),
        );
        const revoke = tokenCli(own.postgres.url, ['revoke', name], /^Revoked/);
        const refusedAt = await Promise.all(polls);
        const { at: revokedAt } = await revoke.reported;
        const exitedAt = await revoke.exited;
        for (const at of refusedAt) {
          revoked.push(at - revokedAt);
          revokedAfterExit.push(at - exitedAt);
        }
      }
    });
    process.stdout.write(
      `[reliability] token sync, 2 instances under ${LOAD_CLIENTS_PER_INSTANCE} creating clients each, ${ROUNDS} rounds: ` +
        `created token accepted ${created.map(ms).join(', ')} ms after the CLI printed it; ` +
        `revoked token refused ${revoked.map(ms).join(', ')} ms after the CLI printed "Revoked" ` +
        `(${revokedAfterExit.map((value) => Math.round(value)).join(', ')} ms from its exit)\n`,
    );
    expect(created).toHaveLength(2 * ROUNDS);
    expect(revoked).toHaveLength(2 * ROUNDS);
    for (const delay of [...created, ...revoked])
      expect(delay).toBeLessThanOrEqual(REACHES_EVERY_REPLICA_MS);
  });

  it('reaches both within 1 s when a revocation follows the killing of their listening connections', async () => {
    const listeners = async () =>
      (
        await sql.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
          [TOKEN_SYNC_APPLICATION_NAME],
        )
      ).rows.map((row) => row.pid);
    const delays: number[] = [];
    await underLoad('creates during killed listeners', async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const name = `killed-${round}-${Date.now()}`;
        const token = `pst_${name}-0123456789abcdefghijklmnopqrstuvwxyz`;
        await sql.query(
          'INSERT INTO api_tokens (name, token_hash) VALUES ($1, $2)',
          [name, hashToken(token)],
        );
        const deadline = performance.now() + 30_000;
        await Promise.all(
          services.map((service) =>
            whenAccepted(service.url, token, true, deadline),
          ),
        );
        const killed = await listeners();
        expect(killed).toHaveLength(2);

        const polls = services.map((service) =>
          whenAccepted(service.url, token, false, performance.now() + 30_000),
        );
        await sql.query(
          'SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid',
          [killed],
        );
        await sql.query(
          'UPDATE api_tokens SET revoked_at = now() WHERE name = $1',
          [name],
        );
        const committed = performance.now();
        for (const at of await Promise.all(polls)) delays.push(at - committed);

        const replaced = await listeners();
        expect(replaced).toHaveLength(2);
        expect(replaced.filter((pid) => killed.includes(pid))).toEqual([]);
      }
    });
    process.stdout.write(
      `[reliability] token sync, listening connections killed by pg_terminate_backend then a revocation, ${ROUNDS} rounds: ` +
        `refused ${delays.map(ms).join(', ')} ms after the revocation committed\n`,
    );
    expect(delays).toHaveLength(2 * ROUNDS);
    for (const delay of delays)
      expect(delay).toBeLessThanOrEqual(REACHES_EVERY_REPLICA_MS);
  });
});
