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
  /** Fails the next heartbeat, as a connection ended by the server does. */
  failNextHeartbeat = false;
  /** Statements of these kinds wait, answered as of when they were sent, until released. */
  readonly hold = { reads: false, heartbeats: false };
  /** The answers of the statements held, in the order sent. */
  readonly held: (() => void)[] = [];
  /** When each connection was opened (Date.now()). */
  readonly openedAt: number[] = [];

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
      query: (sql: string, parameters: unknown[] = []) => {
        const heartbeat = sql === 'SELECT 1';
        if (heartbeat && this.silent) return new Promise(() => {});
        return new Promise((resolve, reject) => {
          let answer: () => void;
          try {
            const rows = this.answer(sql, parameters);
            answer = () => resolve({ rows });
          } catch (error) {
            answer = () => reject(error as Error);
          }
          const held = heartbeat
            ? this.hold.heartbeats
            : this.hold.reads && sql !== 'LISTEN api_tokens_changed';
          if (held) this.held.push(answer);
          else answer();
        });
      },
      end: () => {
        connection.ended = true;
        return Promise.resolve();
      },
    });
    this.connections.push(connection);
    this.openedAt.push(Date.now());
    return connection as unknown as pg.Client;
  };

  private answer(sql: string, parameters: unknown[]): unknown[] {
    this.statements.push({ sql, parameters });
    if (sql === 'SELECT 1' && this.failNextHeartbeat) {
      this.failNextHeartbeat = false;
      throw new Error('Connection terminated unexpectedly');
    }
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
  { maxTokens = 10, maxStalenessMs = 60_000, reloadIntervalMs = 60_000 } = {},
): ActiveTokenStore {
  const store = new ActiveTokenStore({
    maxTokens,
    maxStalenessMs,
    reloadIntervalMs,
    table: 'api_tokens',
    connect: database.connect,
  });
  started.push(store);
  return store;
}

/** A store started (storeOn) on a table in memory with no tokens yet. */
async function startedOnEmptyTable(options?: Parameters<typeof storeOn>[1]) {
  const database = new FakeTokensDatabase();
  const tokens = storeOn(database, options);
  await tokens.start();
  return { database, tokens };
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
    expect(tokens.loaded).toBe(true);
    expect(tokens.stats()).toMatchObject({
      tokens: 2,
      complete: true,
      listening: true,
      reconnects: 0,
      reloads: { connect: 1, periodic: 0, notified: 0 },
    });
  });

  it('follows a notified change of one row: created, then revoked', async () => {
    const { database, tokens } = await startedOnEmptyTable();
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
      reloads: { connect: 1, notified: 0 },
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
      tokens.stats().reloads.notified === 1 ? true : undefined,
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
    const { database, tokens } = await startedOnEmptyTable();
    database.connections[0].emit('error', new Error('terminated'));
    database.add('meanwhile');
    await eventually('the reload after reconnecting', () =>
      tokens.stats().reloads.connect === 2 ? true : undefined,
    );
    expect(tokens.find(keyOf('meanwhile'))).toBeDefined();
    expect(database.connections[0].ended).toBe(true);
    expect(database.open).toBe(1);
    // The old connection's late events are ignored.
    database.connections[0].emit('end');
    expect(tokens.stats()).toMatchObject({ listening: true, reconnects: 1 });
  });

  it('drops a connection that stops answering its heartbeat, and opens another', async () => {
    const { database, tokens } = await startedOnEmptyTable({
      maxStalenessMs: 1_000,
    });
    database.silent = true;
    await eventually('the silent connection dropped', () =>
      database.connections[0].ended ? true : undefined,
    );
    database.silent = false;
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
    expect(database.connections.length).toBeGreaterThan(1);
    expect(database.connections.at(-1)!.ended).toBe(false);
  });

  it('is stale exactly past maxStalenessMs after its last confirmed contact', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const { tokens } = await startedOnEmptyTable({
      maxStalenessMs: 5_000,
    });
    expect(tokens.isStale(1_005_000)).toBe(false);
    expect(tokens.isStale(1_005_001)).toBe(true);
    expect(tokens.stats(1_002_500).secondsSinceContact).toBe(2.5);
  });

  it('stops for good: no connection held, none opened again', async () => {
    const { database, tokens } = await startedOnEmptyTable();
    await tokens.stop();
    expect(database.open).toBe(0);
    database.connections[0].emit('error', new Error('late'));
    expect(database.connections).toHaveLength(1);
    expect(tokens.stats().listening).toBe(false);
  });
});

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

const SELECT_1 = (database: FakeTokensDatabase) =>
  database.statements.filter(({ sql }) => sql === 'SELECT 1').length;

describe('ActiveTokenStore, its reads and what it logs', () => {
  it('is not listening before it starts', () => {
    expect(storeOn(new FakeTokensDatabase()).stats().listening).toBe(false);
  });

  it('gathers the notifications of one turn into one read of their names, and reads each name once', async () => {
    const { database, tokens } = await startedOnEmptyTable();
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
    const { database, tokens } = await startedOnEmptyTable();
    const names = (count: number, prefix: string) =>
      Array.from({ length: count }, (_, index) => `${prefix}${index}`);
    for (const name of names(1000, 'a')) database.notify(name);
    await eventually('a read by name', () =>
      database.readsByName.length === 1 ? true : undefined,
    );
    for (const name of names(1001, 'b')) database.notify(name);
    await eventually('a full reload', () =>
      tokens.stats().reloads.notified === 1 ? true : undefined,
    );
    expect(database.readsByName).toHaveLength(1);
  });

  it('ignores what a connection it has dropped still says', async () => {
    const { database, tokens } = await startedOnEmptyTable();
    database.connections[0].emit('end');
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
    database.connections[0].emit('notification', { payload: 'a' });
    expect(tokens.stats()).toMatchObject({ notifications: 0, reconnects: 1 });
  });

  it('reconnects when a read of named rows fails', async () => {
    const warned = spyOn('warn');
    const { database, tokens } = await startedOnEmptyTable();
    database.failNextRead = true;
    database.notify('a');
    await eventually('the reconnect', () =>
      tokens.stats().reloads.connect === 2 ? true : undefined,
    );
    expect(warned()).toEqual([
      [
        expect.stringContaining(
          'Token sync connection lost or refused (Error: terminating connection due to administrator command)',
        ),
        'TokenSync',
      ],
    ]);
  });

  it('reloads everything periodically, catching a change whose notification was missed', async () => {
    const { database, tokens } = await startedOnEmptyTable({
      reloadIntervalMs: 20,
    });
    database.add('missed');
    await eventually('the periodic reload', () => tokens.find(keyOf('missed')));
    expect(tokens.stats().reloads.periodic).toBeGreaterThan(0);
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
        'Out of touch with the database for over 5000 ms: managed tokens are answered 503 ' +
          'until it reconnects and reloads',
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
      tokens.stats().reloads.notified === 1 ? true : undefined,
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

describe('ActiveTokenStore, when it logs and what it reads', () => {
  it('logs, when it never loaded, the refused connection once and being out of touch once', async () => {
    const warnings = spyOn('warn');
    const errors = spyOn('error');
    const database = new FakeTokensDatabase();
    database.refusing = true;
    const tokens = storeOn(database);
    await tokens.start();
    expect(tokens.isStale()).toBe(true);
    expect(tokens.loaded).toBe(false);
    await eventually('a few refused reconnects', () =>
      database.connections.length >= 3 ? true : undefined,
    );
    expect(tokens.isStale()).toBe(true);
    expect(warnings()).toEqual([
      [
        'Token sync connection lost or refused (connect ECONNREFUSED); reconnecting. Managed ' +
          'tokens are answered from memory for at most 60000 ms after the last contact',
        'TokenSync',
      ],
    ]);
    expect(errors()).toEqual([
      [
        'Out of touch with the database for over 60000 ms: managed tokens are answered 503 ' +
          'until it reconnects and reloads',
        'TokenSync',
      ],
    ]);
  });

  it('logs each connection it loses after listening, naming a connection the server closed', async () => {
    const warnings = spyOn('warn');
    const { database, tokens } = await startedOnEmptyTable();
    database.connections[0].emit('end');
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
    database.connections[1].emit('error', new Error('terminated'));
    await eventually('listening again', () =>
      tokens.stats().listening && database.open === 1 ? true : undefined,
    );
    expect(warnings().map(([message]) => message)).toEqual([
      expect.stringMatching(
        /^Token sync connection lost or refused \(the connection closed\); /,
      ),
      expect.stringMatching(
        /^Token sync connection lost or refused \(terminated\); /,
      ),
    ]);
    expect(tokens.stats().reconnects).toBe(2);
  });

  it('reads everything again on a notification without a payload', async () => {
    const { database, tokens } = await startedOnEmptyTable();
    database.add('x');
    database.connections[0].emit('notification', {});
    await eventually('the reload', () =>
      tokens.stats().reloads.notified === 1 ? true : undefined,
    );
    expect(tokens.find(keyOf('x'))).toBeDefined();
    expect(database.readsByName).toEqual([]);
  });

  it.each([
    ['a periodic reload', { reloadIntervalMs: 20 }, () => {}],
    [
      'a reload for a notification naming no row',
      {},
      (database: FakeTokensDatabase) => database.notify(''),
    ],
  ])(
    'reconnects and loads again when %s fails',
    async (_case, options, trigger) => {
      spyOn('warn');
      const { database, tokens } = await startedOnEmptyTable(options);
      database.failNextRead = true;
      trigger(database);
      await eventually('the reconnect', () =>
        tokens.stats().reloads.connect === 2 ? true : undefined,
      );
      expect(tokens.stats().reconnects).toBe(1);
      expect(database.connections[0].ended).toBe(true);
    },
  );

  it('does not read again, on the next connection, the names notified while it had none', async () => {
    const { database, tokens } = await startedOnEmptyTable();
    database.add('a');
    database.notify('a');
    database.refusing = true;
    database.connections[0].emit('error', new Error('terminated'));
    await eventually('a refused reconnect', () =>
      database.connections.length >= 2 ? true : undefined,
    );
    database.refusing = false;
    await eventually('listening again', () =>
      tokens.stats().listening ? true : undefined,
    );
    // Its reload has 'a' already.
    expect(tokens.find(keyOf('a'))).toBeDefined();
    database.add('b');
    database.notify('b');
    await eventually('the token notified', () => tokens.find(keyOf('b')));
    expect(database.readsByName).toEqual([['b']]);
  });

  it('does not take a load answered after its connection was lost as listening', async () => {
    const warnings = spyOn('warn');
    const logs = spyOn('log');
    const database = new FakeTokensDatabase();
    database.hold.reads = true;
    const tokens = storeOn(database);
    const started = tokens.start();
    await eventually('the first load sent', () =>
      database.held.length === 1 ? true : undefined,
    );
    database.connections[0].emit('error', new Error('terminated'));
    database.refusing = true;
    for (const answer of database.held.splice(0)) answer();
    await started;
    await eventually('a few refused reconnects', () =>
      database.connections.length >= 4 ? true : undefined,
    );
    expect(tokens.stats()).toMatchObject({ listening: false });
    expect(tokens.isStale()).toBe(true);
    expect(warnings()).toHaveLength(1);
    expect(logs()).toEqual([]);
  });

  it.each([
    ['a full reload', ''],
    ['a read by name', 'a'],
  ])(
    'ignores %s answered after its connection was lost, older than the load of the next',
    async (_case, payload) => {
      const database = new FakeTokensDatabase();
      database.add('a');
      const tokens = storeOn(database);
      await tokens.start();
      database.hold.reads = true;
      database.notify(payload);
      await eventually('the read sent', () =>
        database.held.length === 1 ? true : undefined,
      );
      database.rows[0].revoked = true;
      database.connections[0].emit('error', new Error('terminated'));
      await eventually('the next load sent', () =>
        database.held.length === 2 ? true : undefined,
      );
      const [late, load] = database.held.splice(0);
      load();
      await eventually('listening again', () =>
        tokens.stats().listening ? true : undefined,
      );
      expect(tokens.find(keyOf('a'))).toBeUndefined();
      late();
      await new Promise((resolve) => setImmediate(resolve));
      expect(tokens.find(keyOf('a'))).toBeUndefined();
      expect(tokens.stats().reloads).toEqual({
        connect: 2,
        periodic: 0,
        notified: 0,
      });
    },
  );
});

describe('ActiveTokenStore, its timers (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: [
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
        'Date',
      ],
    });
    vi.setSystemTime(1_000_000);
  });

  it.each([
    [60_000, 1_000, 3],
    [1_000, 250, 12],
  ])(
    'with maxStalenessMs %i, sends a heartbeat every %i ms and keeps a connection that answers',
    async (maxStalenessMs, everyMs, beats) => {
      const { database, tokens } = await startedOnEmptyTable({
        maxStalenessMs,
      });
      await vi.advanceTimersByTimeAsync(everyMs - 1);
      expect(SELECT_1(database)).toBe(0);
      await vi.advanceTimersByTimeAsync(1 + (beats - 1) * everyMs);
      expect(SELECT_1(database)).toBe(beats);
      expect(tokens.stats()).toMatchObject({ listening: true, reconnects: 0 });
      expect(database.connections).toHaveLength(1);
      expect(tokens.stats().secondsSinceContact).toBe(0);
    },
  );

  it('drops a connection whose heartbeat fails, and opens another at once', async () => {
    const warnings = spyOn('warn');
    const { database, tokens } = await startedOnEmptyTable({
      maxStalenessMs: 1_000,
    });
    database.failNextHeartbeat = true;
    await vi.advanceTimersByTimeAsync(250);
    expect(database.connections[0].ended).toBe(true);
    // The next connection before the next heartbeat would have gone.
    await vi.advanceTimersByTimeAsync(100);
    expect(tokens.stats()).toMatchObject({ listening: true, reconnects: 1 });
    expect(database.openedAt).toHaveLength(2);
    expect(database.openedAt[1]).toBeLessThan(1_000_000 + 500);
    expect(warnings()[0][0]).toMatch(
      /^Token sync connection lost or refused \(Error: Connection terminated unexpectedly\); /,
    );
  });

  it('does not count a heartbeat answered after its connection was dropped as contact', async () => {
    const { database, tokens } = await startedOnEmptyTable({
      maxStalenessMs: 1_000,
    });
    database.hold.heartbeats = true;
    await vi.advanceTimersByTimeAsync(250);
    expect(database.held).toHaveLength(1);
    database.refusing = true;
    // Unanswered for 500 ms (half maxStalenessMs): dropped.
    await vi.advanceTimersByTimeAsync(500);
    expect(database.connections[0].ended).toBe(true);
    for (const answer of database.held.splice(0)) answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(tokens.isStale(1_001_001)).toBe(true);
  });

  it('retries a refused connection at once, then after 100 ms, doubling up to 2 s once it has loaded', async () => {
    const { database, tokens } = await startedOnEmptyTable();
    database.refusing = true;
    database.connections[0].emit('error', new Error('terminated'));
    await vi.advanceTimersByTimeAsync(7_100);
    expect(database.openedAt.map((at) => at - 1_000_000)).toEqual([
      0, 0, 100, 300, 700, 1_500, 3_100, 5_100, 7_100,
    ]);
    expect(tokens.loaded).toBe(true);
  });

  it('retries up to every 500 ms until it has loaded once: a start waits on it', async () => {
    const database = new FakeTokensDatabase();
    database.refusing = true;
    const tokens = storeOn(database);
    await tokens.start();
    await vi.advanceTimersByTimeAsync(2_200);
    expect(database.openedAt.map((at) => at - 1_000_000)).toEqual([
      0, 0, 100, 300, 700, 1_200, 1_700, 2_200,
    ]);
    database.refusing = false;
    await vi.advanceTimersByTimeAsync(500);
    expect(tokens.loaded).toBe(true);
  });

  it('sends nothing once stopped', async () => {
    const { database, tokens } = await startedOnEmptyTable({
      maxStalenessMs: 1_000,
      reloadIntervalMs: 100,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    await tokens.stop();
    const sent = database.statements.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(database.statements).toHaveLength(sent);
    expect(database.connections).toHaveLength(1);
  });
});
