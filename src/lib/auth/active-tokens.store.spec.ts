import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import type pg from 'pg';
import { eventually } from '../../../test/support/poll.js';
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
  /** Every statement sent, with its parameters. */
  readonly statements: { sql: string; parameters: unknown[] }[] = [];
  /** Fails the next read of rows. */
  failNextRead = false;

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

  /** The reads of named rows sent, each with the names it asked for. */
  get readsByName(): string[][] {
    return this.statements
      .filter(({ sql }) => sql.endsWith('AND name = ANY($1)'))
      .map(({ parameters }) => parameters[0] as string[]);
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
          : new Promise((resolve) =>
              resolve({ rows: this.answer(sql, parameters) }),
            ),
      end: () => {
        connection.ended = true;
        return Promise.resolve();
      },
    });
    this.connections.push(connection);
    return connection as unknown as pg.Client;
  };

  private answer(sql: string, parameters: unknown[]): unknown[] {
    this.statements.push({ sql, parameters });
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
    if (this.failNextRead) {
      this.failNextRead = false;
      throw new Error('terminating connection due to administrator command');
    }
    if (sql.endsWith('LIMIT $1')) {
      // As PostgreSQL: a statement with $1 needs its parameter.
      if (typeof parameters[0] !== 'number') throw new Error('no $1 given');
      return active.slice(0, parameters[0]);
    }
    if (sql.endsWith('AND name = ANY($1)')) {
      const names = parameters[0] as string[];
      return active.filter((row) => names.includes(row.name));
    }
    throw new Error(`Not a statement on api_tokens: ${sql}`);
  }
}

/** The stores a test started, stopped after it. */
const started: ActiveTokenStore[] = [];
afterEach(async () => {
  for (const store of started.splice(0)) await store.stop();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function storeOn(
  database: FakeTokensDatabase,
  { maxTokens = 10, maxStalenessMs = 60_000, resyncIntervalMs = 60_000 } = {},
): ActiveTokenStore {
  const store = new ActiveTokenStore({
    maxTokens,
    maxStalenessMs,
    resyncIntervalMs,
    table: 'api_tokens',
    connect: database.connect,
  });
  started.push(store);
  return store;
}

describe('ActiveTokenStore, on a table in memory', () => {
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

describe('ActiveTokenStore, its reads and what it logs', () => {
  /** The Logger calls of one level, as [message, the logger's context]. */
  const spyOn = (level: 'log' | 'warn' | 'error') => {
    const spy = vi
      .spyOn(Logger.prototype, level)
      .mockImplementation(() => undefined);
    return () =>
      spy.mock.calls.map((call, index) => [
        call[0],
        (spy.mock.contexts[index] as { context?: string }).context,
      ]);
  };

  it('is not listening before it starts', () => {
    expect(storeOn(new FakeTokensDatabase()).stats().listening).toBe(false);
  });

  it('gathers the notifications of one turn into one read of their names, and reads each name once', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    database.add('a');
    database.add('b');
    database.notify('a');
    database.notify('b');
    database.notify('a');
    await eventually('both tokens', () =>
      tokens.find(keyOf('a')) && tokens.find(keyOf('b')) ? true : undefined,
    );
    database.add('c');
    database.notify('c');
    await eventually('the third', () => tokens.find(keyOf('c')));
    expect(database.readsByName).toEqual([['a', 'b'], ['c']]);
  });

  it('reads everything again past 1,000 names at once, and by name up to that', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    const names = (count: number, prefix: string) =>
      Array.from({ length: count }, (_, index) => `${prefix}${index}`);
    for (const name of names(1000, 'a')) database.notify(name);
    await eventually('a read by name', () =>
      database.readsByName.length === 1 ? true : undefined,
    );
    for (const name of names(1001, 'b')) database.notify(name);
    await eventually('a full reload', () =>
      tokens.stats().resyncs.notified === 1 ? true : undefined,
    );
    expect(database.readsByName).toHaveLength(1);
  });

  it('ignores what a connection it has dropped still says', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    database.connections[0].emit('end');
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
    database.connections[0].emit('notification', { payload: 'a' });
    expect(tokens.stats()).toMatchObject({ notifications: 0, reconnects: 1 });
  });

  it('reconnects when a read of named rows fails', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database);
    await tokens.start();
    database.failNextRead = true;
    database.notify('a');
    await eventually('the reconnect', () =>
      tokens.stats().resyncs.connect === 2 ? true : undefined,
    );
  });

  it('reloads everything periodically, catching a change whose notification was missed', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database, { resyncIntervalMs: 20 });
    await tokens.start();
    database.add('missed');
    await eventually('the periodic reload', () => tokens.find(keyOf('missed')));
    expect(tokens.stats().resyncs.periodic).toBeGreaterThan(0);
  });

  it('counts an answered heartbeat as contact', async () => {
    const database = new FakeTokensDatabase();
    const tokens = storeOn(database, { maxStalenessMs: 1_000 });
    const loadedBy = Date.now();
    await tokens.start();
    await eventually('two heartbeats answered', () =>
      database.statements.filter(({ sql }) => sql === 'SELECT 1').length >= 3
        ? true
        : undefined,
    );
    // Heartbeats go every 250 ms here: the second was sent at least 250 ms after the load.
    expect(tokens.isStale(loadedBy + 1_000 + 200)).toBe(false);
  });

  it('logs, as TokenSync, losing its connection once, how long until it listened again, and being stale once', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const warnings = spyOn('warn');
    const logs = spyOn('log');
    const errors = spyOn('error');
    const database = new FakeTokensDatabase();
    database.add('a');
    const tokens = storeOn(database, { maxStalenessMs: 5_000 });
    await tokens.start();
    database.refusing = true;
    database.connections[0].emit('error', new Error('terminated'));
    await eventually('a few refused reconnects', () =>
      database.connections.length >= 3 ? true : undefined,
    );
    expect(tokens.isStale(1_005_001)).toBe(true);
    expect(tokens.isStale(1_005_002)).toBe(true);
    vi.setSystemTime(1_000_300);
    database.refusing = false;
    await eventually('listening again', () =>
      tokens.stats().listening ? true : undefined,
    );
    expect(warnings()).toEqual([
      [
        'Token sync connection lost or refused (terminated); reconnecting. Managed tokens are ' +
          'answered from memory for at most 5000 ms after the last contact',
        'TokenSync',
      ],
    ]);
    expect(logs()).toEqual([
      ['Listening again after 300 ms; reloaded 1 active token(s)', 'TokenSync'],
    ]);
    expect(errors()).toEqual([
      [
        'Out of touch with the database for over 5000 ms: managed tokens are answered 503 and ' +
          'readiness is 503 until it reconnects and reloads',
        'TokenSync',
      ],
    ]);
    // Stale again later: logged again.
    expect(tokens.isStale(1_000_300 + 5_001)).toBe(true);
    expect(errors()).toHaveLength(2);
  });

  it('logs once when the table holds more tokens than it may, and names the heartbeat that went unanswered', async () => {
    const warnings = spyOn('warn');
    const errors = spyOn('error');
    const database = new FakeTokensDatabase();
    for (const name of ['a', 'b', 'c']) database.add(name);
    const tokens = storeOn(database, { maxTokens: 2, maxStalenessMs: 1_000 });
    await tokens.start();
    database.notify('');
    await eventually('a second full read', () =>
      tokens.stats().resyncs.notified === 1 ? true : undefined,
    );
    expect(errors()).toEqual([
      [
        'More than 2 active managed tokens (TOKEN_STORE_MAX_TOKENS): the oldest are held in ' +
          'memory, the others are looked up in the database per request',
        'TokenSync',
      ],
    ]);
    database.silent = true;
    await eventually('the silent connection dropped', () =>
      database.connections[0].ended ? true : undefined,
    );
    database.silent = false;
    expect(warnings()[0][0]).toMatch(
      /^Token sync connection lost or refused \(no answer to a heartbeat in 500 ms\)/,
    );
  });
});
