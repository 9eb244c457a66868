import { Logger } from '@nestjs/common';
import pg from 'pg';
import {
  type ActiveTokenColumns,
  activeRowsOf,
  toActiveTokenRow,
} from './active-token-rows.js';
import { type ActiveToken, ActiveTokens } from './active-tokens.js';

/** The channel the api_tokens trigger notifies (migration 1764000000000). */
export const TOKENS_CHANGED_CHANNEL = 'api_tokens_changed';
/** The listener's pg_stat_activity name when its DataSource has none (listener-connection.ts). */
export const TOKEN_SYNC_APPLICATION_NAME = 'plant-store-token-sync';

export interface ActiveTokenStoreOptions {
  maxTokens: number;
  maxStalenessMs: number;
  reloadIntervalMs: number;
  /** The api_tokens table as SQL names it (in the DataSource's schema). */
  table: string;
  /** Opens the listening connection, outside the pool, with connect and query timeouts. */
  connect: () => pg.Client;
}

// A change names rows; past this many waiting at once, one full reload is cheaper.
const MOST_NAMES_PER_READ = 1_000;
// The first retry at once (a killed backend is usually all that failed), then back-off.
const RECONNECT_FIRST_MS = 0;
const RECONNECT_SECOND_MS = 100;
const RECONNECT_MOST_MS = 2_000;
// Before the first load a start waits on it: tried as often as the service's own first connect.
const RECONNECT_MOST_NEVER_LOADED_MS = 500;

export type ReloadReason = 'connect' | 'periodic' | 'notified';

/**
 * The active managed tokens in memory, kept current by LISTEN/NOTIFY (docs/tokens.md): it listens
 * before each full load, and one connection answers in order, so no change falls between.
 */
export class ActiveTokenStore {
  private readonly logger = new Logger('TokenSync');
  private readonly tokens: ActiveTokens;
  private readonly activeRows: string;
  private client: pg.Client | undefined;
  // Bumped per connection: what an old connection answers late is ignored.
  private generation = 0;
  private listening = false;
  private lastConfirmedAt: number | undefined;
  private lostAt: number | undefined;
  private reportedStale = false;
  private stopped = false;
  private reconnectDelayMs = RECONNECT_FIRST_MS;
  private readonly changedNames = new Set<string>();
  private readPending = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private periodicReload: NodeJS.Timeout | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private readonly counts = {
    reloads: { connect: 0, periodic: 0, notified: 0 } as Record<
      ReloadReason,
      number
    >,
    reconnects: 0,
    notifications: 0,
  };

  constructor(private readonly options: ActiveTokenStoreOptions) {
    this.tokens = new ActiveTokens(options.maxTokens);
    this.activeRows = activeRowsOf(options.table);
  }

  /** Connects, listens and loads; resolves once loaded, or once the first try failed. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.open();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    this.drop();
  }

  /** The token held under `key` (token-hash.ts's hash, in base64), if active. */
  find(key: string): ActiveToken | undefined {
    return this.tokens.find(key);
  }

  /** False when the table has more active tokens than the store may hold. */
  get complete(): boolean {
    return this.tokens.complete;
  }

  /** True once it has loaded the tokens at least once: before that it knows none of them. */
  get loaded(): boolean {
    return this.lastConfirmedAt !== undefined;
  }

  /** True when the last confirmed contact is older than maxStalenessMs, or it never loaded. */
  isStale(now: number = Date.now()): boolean {
    const stale =
      this.lastConfirmedAt === undefined ||
      now - this.lastConfirmedAt > this.options.maxStalenessMs;
    if (stale && !this.reportedStale) {
      this.reportedStale = true;
      this.logger.error(
        `Out of touch with the database for over ${this.options.maxStalenessMs} ms: ` +
          'managed tokens are answered 503 until it reconnects and reloads',
      );
    }
    return stale;
  }

  stats(now: number = Date.now()) {
    return {
      tokens: this.tokens.size,
      complete: this.tokens.complete,
      listening: this.listening,
      secondsSinceContact:
        this.lastConfirmedAt === undefined
          ? Number.POSITIVE_INFINITY
          : (now - this.lastConfirmedAt) / 1000,
      ...this.counts,
      reloads: { ...this.counts.reloads },
    };
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const client = this.options.connect();
    this.client = client;
    const lost = (why: string) => this.lose(generation, why);
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('the connection closed'));
    client.on('notification', (message) => {
      if (generation !== this.generation) return;
      this.counts.notifications += 1;
      this.changed(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${TOKENS_CHANGED_CHANNEL}`);
      // Listening before the read: a change committed meanwhile is notified, and read again.
      await this.reload(client, generation, 'connect');
    } catch (error) {
      lost(error instanceof Error ? error.message : String(error));
      return;
    }
    if (generation !== this.generation) return;
    if (this.lostAt !== undefined) {
      this.logger.log(
        `Listening again after ${Date.now() - this.lostAt} ms; reloaded ${this.tokens.size} active token(s)`,
      );
    }
    this.lostAt = undefined;
    this.reportedStale = false;
    this.reconnectDelayMs = RECONNECT_FIRST_MS;
    this.listening = true;
    this.scheduleHeartbeat(client, generation);
    this.periodicReload = setInterval(() => {
      this.reload(client, generation, 'periodic').catch((error: unknown) =>
        this.lose(generation, String(error)),
      );
    }, this.options.reloadIntervalMs);
    this.periodicReload.unref();
  }

  /** Reads every active token and replaces what is held, if this is still the connection. */
  private async reload(
    client: pg.Client,
    generation: number,
    reason: ReloadReason,
  ): Promise<void> {
    const sentAt = Date.now();
    const { rows } = await client.query<ActiveTokenColumns>(
      `${this.activeRows} ORDER BY created_at, name LIMIT $1`,
      [this.options.maxTokens + 1],
    );
    if (generation !== this.generation) return;
    const more = rows.length > this.options.maxTokens;
    const wasComplete = this.tokens.complete;
    this.tokens.replaceAll(
      rows.slice(0, this.options.maxTokens).map(toActiveTokenRow),
      more,
    );
    this.lastConfirmedAt = sentAt;
    this.counts.reloads[reason] += 1;
    if (more && wasComplete) {
      this.logger.error(
        `More than ${this.options.maxTokens} active managed tokens (TOKEN_STORE_MAX_TOKENS): ` +
          'the oldest are held in memory, the others are looked up in the database per request',
      );
    }
  }

  private changed(name: string): void {
    if (name === '') {
      // TRUNCATE, or a name too long for a notification: everything is read again.
      this.changedNames.clear();
      this.changedNames.add('');
    } else if (!this.changedNames.has('')) {
      this.changedNames.add(name);
    }
    if (this.readPending) return;
    this.readPending = true;
    // Notifications of one transaction arrive together: gathered into one read.
    setImmediate(() => this.readChanged());
  }

  private readChanged(): void {
    this.readPending = false;
    const client = this.client;
    const generation = this.generation;
    if (client === undefined) {
      // Stopped, or between connections: the reload after the next one covers them.
      this.changedNames.clear();
      return;
    }
    // Also during the first load: this read queues behind it on the connection.
    const names = [...this.changedNames];
    this.changedNames.clear();
    if (names.includes('') || names.length > MOST_NAMES_PER_READ) {
      this.reload(client, generation, 'notified').catch((error: unknown) =>
        this.lose(generation, String(error)),
      );
      return;
    }
    client
      .query<ActiveTokenColumns>(`${this.activeRows} AND name = ANY($1)`, [
        names,
      ])
      .then(({ rows }) => {
        if (generation !== this.generation) return;
        this.tokens.applyChanges(names, rows.map(toActiveTokenRow));
      })
      .catch((error: unknown) => this.lose(generation, String(error)));
  }

  private scheduleHeartbeat(client: pg.Client, generation: number): void {
    const everyMs = Math.min(1_000, this.options.maxStalenessMs / 4);
    const timeoutMs = this.options.maxStalenessMs / 2;
    const beat = () => {
      if (generation !== this.generation) return;
      const sentAt = Date.now();
      // A connection silent past the timeout (a hung server, a lost network) is dropped.
      const silent = setTimeout(
        () =>
          this.lose(generation, `no answer to a heartbeat in ${timeoutMs} ms`),
        timeoutMs,
      );
      silent.unref();
      client.query('SELECT 1').then(
        () => {
          clearTimeout(silent);
          if (generation !== this.generation) return;
          this.lastConfirmedAt = sentAt;
          this.heartbeat = setTimeout(beat, everyMs);
          this.heartbeat.unref();
        },
        (error: unknown) => {
          clearTimeout(silent);
          this.lose(generation, String(error));
        },
      );
    };
    this.heartbeat = setTimeout(beat, everyMs);
    this.heartbeat.unref();
  }

  /** The connection of `generation` failed: drop it and open another after a pause. */
  private lose(generation: number, why: string): void {
    if (generation !== this.generation || this.stopped) return;
    const wasListening = this.listening;
    this.drop();
    this.lostAt ??= Date.now();
    this.counts.reconnects += 1;
    if (wasListening || this.counts.reconnects === 1) {
      this.logger.warn(
        `Token sync connection lost or refused (${why}); reconnecting. Managed tokens are answered ` +
          `from memory for at most ${this.options.maxStalenessMs} ms after the last contact`,
      );
    }
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(
      Math.max(delay * 2, RECONNECT_SECOND_MS),
      this.loaded ? RECONNECT_MOST_MS : RECONNECT_MOST_NEVER_LOADED_MS,
    );
    this.reconnect = setTimeout(() => void this.open(), delay);
    this.reconnect.unref();
  }

  private drop(): void {
    this.generation += 1;
    this.listening = false;
    clearTimeout(this.heartbeat);
    clearInterval(this.periodicReload);
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    // Its late 'error' and 'end' events belong to an old generation and are ignored.
    client.end().catch(() => undefined);
  }
}
