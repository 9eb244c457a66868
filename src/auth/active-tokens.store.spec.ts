import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { eventually } from '../../test-kit/poll.js';
import { tokenKey } from './active-tokens.js';
import { ActiveTokenStore } from './active-tokens.store.js';
import { hashToken } from './token-hash.js';

interface TokenRow {
  name: string;
  token_hash: Buffer;
  expires_at: Date | null;
  revoked: boolean;
}

const keyOf = (name: string) => tokenKey(hashToken(`pst_${name}`));

/**
 * Where PostgreSQL would be: the api_tokens table in memory, and the listening connections
 * the store opens on it, answering what the store's statements ask (LISTEN, the active rows
 * in order with a limit, the active rows among some names, the heartbeat). `refusing`
 * fails new connections, `silent` leaves heartbeats unanswered; notify() is the trigger.
 */
class FakeTokensDatabase {
  readonly rows: TokenRow[] = [];
  readonly connections: (EventEmitter & { ended: boolean })[] = [];
  refusing = false;
  silent = false;

  add(name: string, changes: Partial<TokenRow> = {}): void {
    this.rows.push({
      name,
      token_hash: hashToken(`pst_${name}`),
      expires_at: null,
      revoked: false,
      ...changes,
    });
  }

  notify(name: string): void {
    for (const connection of this.connections)
      if (!connection.ended) connection.emit('notification', { payload: name });
  }

  get open(): number {
    return this.connections.filter((connection) => !connection.ended).length;
  }

  readonly connect = (): pg.Client => {
    const connection = Object.assign(new EventEmitter(), {
      ended: false,
      connect: () =>
        this.refusing
          ? Promise.reject(new Error('connect ECONNREFUSED'))
          : Promise.resolve(),
      query: (sql: string, parameters: unknown[] = []) =>
        this.silent && sql === 'SELECT 1'
          ? new Promise(() => {})
          : Promise.resolve({ rows: this.answer(sql, parameters) }),
      end: () => {
        connection.ended = true;
        return Promise.resolve();
      },
    });
    this.connections.push(connection);
    return connection as unknown as pg.Client;
  };

  private answer(sql: string, parameters: unknown[]): unknown[] {
    const active = this.rows
      .filter(
        (row) =>
          !row.revoked &&
          (row.expires_at === null || row.expires_at.getTime() > Date.now()),
      )
      .map(({ name, token_hash, expires_at }) => ({
        name,
        token_hash,
        expires_at,
      }));
    if (sql === 'LISTEN api_tokens_changed' || sql === 'SELECT 1') return [];
    // Reads of the active rows only: what the store holds is what this filter lets through.
    if (
      !/FROM api_tokens\s+WHERE revoked_at IS NULL AND \(expires_at IS NULL OR expires_at > now\(\)\)/.test(
        sql,
      )
    )
      throw new Error(`Not a read of the active tokens: ${sql}`);
    if (sql.endsWith('LIMIT $1'))
      return active.slice(0, parameters[0] as number);
    if (sql.endsWith('AND name = ANY($1)')) {
      const names = parameters[0] as string[];
      return active.filter((row) => names.includes(row.name));
    }
    throw new Error(`Not a statement on api_tokens: ${sql}`);
  }
}

describe('ActiveTokenStore, on a table in memory', () => {
  let store: ActiveTokenStore | undefined;
  afterEach(async () => {
    await store?.stop();
    vi.useRealTimers();
  });

  const storeOn = (
    database: FakeTokensDatabase,
    { maxTokens = 10, maxStalenessMs = 60_000 } = {},
  ) => {
    store = new ActiveTokenStore({
      maxTokens,
      maxStalenessMs,
      resyncIntervalMs: 60_000,
      connect: database.connect,
    });
    return store;
  };

  it('holds the active tokens once started, not revoked or expired ones', async () => {
    const database = new FakeTokensDatabase();
    database.add('a');
    database.add('b', { revoked: true });
    database.add('c', { expires_at: new Date(Date.now() - 1_000) });
    const later = new Date(Date.now() + 3_600_000);
    database.add('d', { expires_at: later });
    const tokens = storeOn(database);
    await tokens.start();
    expect(tokens.find(keyOf('a'))).toEqual({ name: 'a', expiresAt: null });
    expect(tokens.find(keyOf('b'))).toBeUndefined();
    expect(tokens.find(keyOf('c'))).toBeUndefined();
    expect(tokens.find(keyOf('d'))).toEqual({
      name: 'd',
      expiresAt: later.getTime(),
    });
    expect(tokens.complete).toBe(true);
    expect(tokens.isStale()).toBe(false);
    expect(tokens.stats()).toMatchObject({
      tokens: 2,
      complete: true,
      listening: true,
      reconnects: 0,
      resyncs: { connect: 1, periodic: 0, notified: 0 },
    });
  });

  it('follows a notified change of one row: created, then revoked', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    database.add('new');
    database.notify('new');
    await eventually('the created token', () => tokens.find(keyOf('new')));
    database.rows[0].revoked = true;
    database.notify('new');
    await eventually('the revoked token gone', () =>
      tokens.find(keyOf('new')) === undefined ? true : undefined,
    );
    expect(tokens.stats()).toMatchObject({
      notifications: 2,
      resyncs: { connect: 1, notified: 0 },
    });
  });

  it('reads everything again on a notification naming no row (a TRUNCATE)', async () => {
    const database = new FakeTokensDatabase();
    database.add('a');
    const tokens = storeOn(database);
    await tokens.start();
    database.rows.length = 0;
    database.add('b');
    database.notify('b');
    database.notify('');
    await eventually('the reload', () =>
      tokens.stats().resyncs.notified === 1 ? true : undefined,
    );
    expect(tokens.find(keyOf('a'))).toBeUndefined();
    expect(tokens.find(keyOf('b'))).toBeDefined();
  });

  it('holds at most maxTokens, the oldest, and says it is not complete', async () => {
    const database = new FakeTokensDatabase();
    for (const name of ['a', 'b', 'c']) database.add(name);
    const tokens = storeOn(database, { maxTokens: 2 });
    await tokens.start();
    expect(tokens.complete).toBe(false);
    expect(tokens.find(keyOf('a'))).toBeDefined();
    expect(tokens.find(keyOf('b'))).toBeDefined();
    expect(tokens.find(keyOf('c'))).toBeUndefined();
    database.rows.pop();
    database.notify('');
    await eventually('a complete reload', () =>
      tokens.complete ? true : undefined,
    );
  });

  it('is stale when it never loaded, and loads once the database takes connections again', async () => {
    const database = new FakeTokensDatabase();
    database.refusing = true;
    database.add('a');
    const tokens = storeOn(database);
    await tokens.start();
    expect(tokens.isStale()).toBe(true);
    expect(tokens.stats()).toMatchObject({
      listening: false,
      secondsSinceContact: Number.POSITIVE_INFINITY,
    });
    database.refusing = false;
    await eventually('the store listening again', () =>
      tokens.stats().listening ? true : undefined,
    );
    expect(tokens.isStale()).toBe(false);
    expect(tokens.find(keyOf('a'))).toBeDefined();
    expect(tokens.stats().reconnects).toBeGreaterThanOrEqual(1);
  });

  it('reconnects and reloads when its connection fails, missing no change made meanwhile', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    database.connections[0].emit('error', new Error('terminated'));
    database.add('meanwhile');
    await eventually('the reload after reconnecting', () =>
      tokens.stats().resyncs.connect === 2 ? true : undefined,
    );
    expect(tokens.find(keyOf('meanwhile'))).toBeDefined();
    expect(database.connections[0].ended).toBe(true);
    expect(database.open).toBe(1);
    // The old connection's late events are ignored.
    database.connections[0].emit('end');
    expect(tokens.stats()).toMatchObject({ listening: true, reconnects: 1 });
  });

  it('drops a connection that stops answering its heartbeat, and opens another', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database, { maxStalenessMs: 1_000 });
    await tokens.start();
    database.silent = true;
    await eventually('the silent connection dropped', () =>
      database.connections[0].ended ? true : undefined,
    );
    database.silent = false;
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
  });

  it('is stale exactly past maxStalenessMs after its last confirmed contact', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database, { maxStalenessMs: 5_000 });
    await tokens.start();
    expect(tokens.isStale(1_005_000)).toBe(false);
    expect(tokens.isStale(1_005_001)).toBe(true);
    expect(tokens.stats(1_002_500).secondsSinceContact).toBe(2.5);
  });

  it('stops for good: no connection held, none opened again', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    await tokens.stop();
    expect(database.open).toBe(0);
    database.connections[0].emit('error', new Error('late'));
    expect(database.connections).toHaveLength(1);
    expect(tokens.stats().listening).toBe(false);
  });
});
