import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { TOKEN_SYNC_APPLICATION_NAME } from '../src/lib/managed-tokens/active-tokens.store.js';
import { hashToken } from '../src/lib/managed-tokens/token-hash.js';
import { dataSourceOptions } from '../src/service/database/data-source-options.js';
import { runMigrations } from '../src/service/database/migration-runner.js';
import { MIGRATIONS } from '../src/lib/database/migrations/index.js';
import { NotifyApiTokenChanges1764000000000 } from '../src/lib/database/migrations/1764000000000-notify-api-token-changes.js';
import { DataSource } from 'typeorm';
import { startApp } from './support/app.js';
import { errorBody, expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { eventually } from './support/poll.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { TOKEN } from './support/tokens.js';

const newToken = () => `pst_${randomBytes(32).toString('base64url')}`;

/** The status a create with `token` gets. */
async function statusWith(url: string, token: string): Promise<number> {
  return (await postPlant(url, newPlantJson(uniqueId(), 'Fern'), { token }))
    .status;
}

/** Polls until a create with `token` gets `status`. */
function untilStatus(url: string, token: string, status: number) {
  return eventually(`a create answered ${status}`, async () =>
    (await statusWith(url, token)) === status ? true : undefined,
  );
}

/** One sample of the service's metrics, by its whole name and labels. */
async function metric(url: string, series: string): Promise<number> {
  const { text } = await send(`${url}/metrics`);
  const line = text
    .split('\n')
    .find((candidate) => candidate.startsWith(`${series} `));
  if (line === undefined) throw new Error(`No ${series} in /metrics`);
  return Number(line.slice(series.length + 1));
}

/**
 * The service on a database of its own, and a superuser connection to that database that
 * writes api_tokens as another program would: with SQL, not through the service.
 */
async function serviceOnOwnDatabase(
  label: string,
  settings: Record<string, string> = {},
) {
  const databaseUrl = await createScratchDatabase(inject('databaseUrl'), label);
  const service = await startApp({
    DATABASE_URL: databaseUrl,
    // Polling for a refusal is failed authentication: never let it turn into 429.
    AUTH_FAILURE_LIMIT: '1000000',
    ...settings,
  });
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const database = new URL(databaseUrl).pathname.slice(1);
  async function insert(name: string, token: string): Promise<void> {
    await sql.query(
      'INSERT INTO api_tokens (name, token_hash) VALUES ($1, $2)',
      [name, hashToken(token)],
    );
  }
  return {
    service,
    sql,
    database,
    insert,
    /** A new token, inserted as `${prefix}-` and a unique id, once the service accepts it. */
    async acceptedToken(prefix: string) {
      const token = newToken();
      const name = `${prefix}-${uniqueId()}`;
      await insert(name, token);
      await untilStatus(service.url, token, 200);
      return { name, token };
    },
    /** The listening connection's backend, once there is one. */
    listener() {
      return eventually('the token sync connection', async () => {
        const { rows } = await sql.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
          [database, TOKEN_SYNC_APPLICATION_NAME],
        );
        return rows[0]?.pid;
      });
    },
    async close() {
      await service.close();
      await sql.end();
    },
  };
}

describe('managed tokens held in memory, kept current by the database', () => {
  let own: Awaited<ReturnType<typeof serviceOnOwnDatabase>>;
  beforeAll(async () => {
    // No periodic reload during the test: every change must come by notification.
    own = await serviceOnOwnDatabase('tokensync', {
      TOKEN_RELOAD_INTERVAL_MS: '600000',
    });
  });
  afterAll(() => own.close());

  it('follows any writer of api_tokens: insert, revoke, restore, delete, truncate', async () => {
    const url = own.service.url;
    const token = newToken();
    expect(await statusWith(url, token)).toBe(401);

    await own.insert(`other-writer-${uniqueId()}`, token);
    await untilStatus(url, token, 200);
    await own.sql.query(
      'UPDATE api_tokens SET revoked_at = now() WHERE token_hash = $1',
      [hashToken(token)],
    );
    await untilStatus(url, token, 401);
    await own.sql.query(
      'UPDATE api_tokens SET revoked_at = NULL WHERE token_hash = $1',
      [hashToken(token)],
    );
    await untilStatus(url, token, 200);
    await own.sql.query('DELETE FROM api_tokens WHERE token_hash = $1', [
      hashToken(token),
    ]);
    await untilStatus(url, token, 401);

    const { token: truncated } = await own.acceptedToken('truncated');
    const reloads = await metric(
      url,
      'api_token_store_reloads_total{reason="notified"}',
    );
    await own.sql.query('TRUNCATE api_tokens');
    await untilStatus(url, truncated, 401);
    expect(
      await metric(url, 'api_token_store_reloads_total{reason="notified"}'),
    ).toBe(reloads + 1);
    expect(await metric(url, 'api_tokens_held')).toBe(0);
  });

  it('listens again and reloads after its connection is killed, and misses no revocation', async () => {
    const url = own.service.url;
    const { name, token } = await own.acceptedToken('killed');
    const failures = await metric(
      url,
      'api_token_sync_connection_failures_total',
    );
    const connects = await metric(
      url,
      'api_token_store_reloads_total{reason="connect"}',
    );

    const killed = await own.listener();
    await own.sql.query('SELECT pg_terminate_backend($1)', [killed]);
    await own.sql.query(
      'UPDATE api_tokens SET revoked_at = now() WHERE name = $1',
      [name],
    );
    await untilStatus(url, token, 401);

    const again = await own.listener();
    expect(again).not.toBe(killed);
    await eventually('the reload after reconnecting', async () =>
      (await metric(url, 'api_token_store_reloads_total{reason="connect"}')) >
      connects
        ? true
        : undefined,
    );
    expect(
      await metric(url, 'api_token_sync_connection_failures_total'),
    ).toBeGreaterThan(failures);
    expect(await metric(url, 'api_token_sync_listening')).toBe(1);
  });
});

describe('a token store that cannot listen', () => {
  let own: Awaited<ReturnType<typeof serviceOnOwnDatabase>>;
  // A database cannot refuse connections from inside itself: this one is the run's.
  let admin: pg.Client;
  const allowConnections = (allow: boolean) =>
    admin.query(
      `ALTER DATABASE ${admin.escapeIdentifier(own.database)} WITH ALLOW_CONNECTIONS ${allow}`,
    );
  beforeAll(async () => {
    own = await serviceOnOwnDatabase('tokenstale', {
      TOKEN_SYNC_MAX_STALENESS_MS: '1000',
    });
    admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
  });
  afterAll(async () => {
    await allowConnections(true);
    await admin.end();
    await own.close();
  });

  it('answers managed tokens 503 and /health 503 once out of touch past the bound, stays ready, and recovers by itself', async () => {
    const url = own.service.url;
    const { token } = await own.acceptedToken('stale');

    // New connections refused (the pool's open ones stay), then the listener is cut.
    await allowConnections(false);
    await own.sql.query('SELECT pg_terminate_backend($1)', [
      await own.listener(),
    ]);

    const unhealthy = await eventually('/health 503', async () => {
      const answer = await send(`${url}/health`);
      return answer.status === 503 ? answer : undefined;
    });
    expect(unhealthy.body).toEqual(
      errorBody(
        503,
        'The service is not healthy: its managed tokens are out of date.',
      ),
    );
    expect(unhealthy.headers.get('retry-after')).not.toBeNull();
    // Still ready (issue 42): the store is out of touch with a database every replica
    // shares; readiness failing everywhere would leave a balancer nobody to send to.
    expect((await send(`${url}/health/ready`)).status).toBe(200);
    const refused = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
      token,
    });
    expectErrorAnswer(refused, 503);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(await metric(url, 'api_token_sync_listening')).toBe(0);
    expect(
      await metric(url, 'api_token_sync_contact_age_seconds'),
    ).toBeGreaterThan(1);

    await allowConnections(true);
    await eventually('/health 200 again', async () =>
      (await send(`${url}/health`)).status === 200 ? true : undefined,
    );
    await untilStatus(url, token, 200);
  });
});

describe('the token store past its bound, and its periodic reload', () => {
  let own: Awaited<ReturnType<typeof serviceOnOwnDatabase>>;
  const tokens = [newToken(), newToken(), newToken()];
  beforeAll(async () => {
    own = await serviceOnOwnDatabase('tokenbound', {
      TOKEN_STORE_MAX_TOKENS: '2',
      TOKEN_RELOAD_INTERVAL_MS: '1000',
    });
  });
  afterAll(() => own.close());

  it('holds no more than TOKEN_STORE_MAX_TOKENS, says so, and still accepts the others by look-up', async () => {
    const url = own.service.url;
    for (const [index, token] of tokens.entries())
      await own.insert(`bound-${index}-${uniqueId()}`, token);
    await eventually('the store marked incomplete', async () =>
      (await metric(url, 'api_token_store_complete')) === 0 ? true : undefined,
    );
    expect(await metric(url, 'api_tokens_held')).toBe(2);
    for (const token of tokens) expect(await statusWith(url, token)).toBe(200);
    expect(await statusWith(url, newToken())).toBe(401);
    expect(await statusWith(url, TOKEN)).toBe(200);
  });

  it('catches, by its periodic reload, a change made with the trigger switched off', async () => {
    const url = own.service.url;
    await own.sql.query('DELETE FROM api_tokens');
    const { name, token } = await own.acceptedToken('silent');
    const periodic = await metric(
      url,
      'api_token_store_reloads_total{reason="periodic"}',
    );

    // As logical replication applies rows: no trigger fires, so nothing is notified.
    await own.sql.query('SET session_replication_role = replica');
    await own.sql.query(
      'UPDATE api_tokens SET revoked_at = now() WHERE name = $1',
      [name],
    );
    await own.sql.query('SET session_replication_role = DEFAULT');
    await untilStatus(url, token, 401);
    expect(
      await metric(url, 'api_token_store_reloads_total{reason="periodic"}'),
    ).toBeGreaterThan(periodic);
  });
});

describe('the migration that makes api_tokens notify', () => {
  it('goes down and up again: no trigger left, then notifications again', async () => {
    const url = await createScratchDatabase(inject('databaseUrl'), 'notifymig');
    const options = dataSourceOptions(url, {
      DATABASE_POOL_SIZE: 2,
      DATABASE_CONNECT_TIMEOUT_MS: 2_000,
      DATABASE_QUERY_TIMEOUT_MS: 5_000,
    });
    await runMigrations(options);
    const triggers = async (dataSource: DataSource) =>
      (
        (await dataSource.query(
          "SELECT tgname FROM pg_trigger WHERE tgrelid = 'api_tokens'::regclass AND NOT tgisinternal ORDER BY tgname",
        )) as { tgname: string }[]
      ).map((row) => row.tgname);
    const dataSource = await new DataSource(options).initialize();
    const listener = new pg.Client({ connectionString: url });
    try {
      expect(await triggers(dataSource)).toEqual([
        'api_tokens_notify_row_change',
        'api_tokens_notify_truncate',
      ]);
      // Undone back to before it: it, and every migration after it, newest first.
      const fromIt =
        MIGRATIONS.length -
        MIGRATIONS.indexOf(NotifyApiTokenChanges1764000000000);
      for (let undone = 0; undone < fromIt; undone += 1)
        await dataSource.undoLastMigration();
      expect(await triggers(dataSource)).toEqual([]);
      await runMigrations(options);
      expect(await triggers(dataSource)).toHaveLength(2);

      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (message) =>
        heard.push(message.payload ?? ''),
      );
      await listener.query('LISTEN api_tokens_changed');
      await dataSource.query(
        'INSERT INTO api_tokens (name, token_hash) VALUES ($1, $2)',
        ['heard', hashToken(newToken())],
      );
      await eventually('the notification', () =>
        heard.length > 0 ? heard : undefined,
      );
      expect(heard).toEqual(['heard']);
    } finally {
      await listener.end();
      await dataSource.destroy();
    }
  });
});
