import { Injectable } from '@nestjs/common';
import {
  ApiTokensService,
  MANAGED_TOKEN_PREFIX,
} from './api-tokens.service.js';
import { AuthSettings } from './auth-module.options.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { findTokenHash, hashToken } from './token-hash.js';
import {
  AuthenticatedClient,
  TokenVerifier,
  type VerifyOptions,
} from './token-verifier.js';
import { TtlCache } from './ttl-cache.js';

const CACHE_MAX_ENTRIES = 10_000;
// Hashes once found valid: no more than the table's live tokens, so a small bound does.
const KNOWN_MAX_ENTRIES = 10_000;

interface LookedUpToken {
  name: string;
  expiresAt: number | null;
}

/**
 * Accepts the tokens of AuthModule's `tokens` option (the service's API_TOKENS), compared
 * by hash in constant time, and the managed tokens of the api_tokens table. Table
 * look-ups, found or not, are cached for tokenCacheTtlMs (TOKEN_CACHE_TTL_MS) so the hot path does not query per request: a revocation takes
 * effect within that time, an expiry at once (the cached entry carries the expiry).
 * What a flood of unknown tokens can cost the database is bounded: their look-ups run at
 * most tokenLookupConcurrency (TOKEN_LOOKUP_CONCURRENCY) at a time, and none at all for a suspect caller.
 */
@Injectable()
export class ApiTokenVerifier extends TokenVerifier {
  // Found and not found apart, so a flood of unknown tokens cannot push out valid ones.
  private readonly found: TtlCache<LookedUpToken>;
  private readonly notFound: TtlCache<null>;
  // Tokens this process has seen valid: still looked up for a suspect caller, and never
  // queued behind unknown ones, so a flood sharing their address does not refuse them.
  private readonly known = new Set<string>();
  private readonly unknownLookUps: ConcurrencyLimit;
  // One query per token at a time, however many requests carry it.
  private readonly pending = new Map<string, Promise<LookedUpToken | null>>();

  constructor(
    private readonly configured: ConfiguredTokens,
    private readonly tokens: ApiTokensService,
    settings: AuthSettings,
  ) {
    super();
    this.found = new TtlCache(settings.tokenCacheTtlMs, CACHE_MAX_ENTRIES);
    this.notFound = new TtlCache(settings.tokenCacheTtlMs, CACHE_MAX_ENTRIES);
    this.unknownLookUps = new ConcurrencyLimit(settings.tokenLookupConcurrency);
  }

  async verify(
    token: string,
    { suspect = false }: VerifyOptions = {},
  ): Promise<AuthenticatedClient | undefined> {
    const index = findTokenHash(token, this.configured.hashes);
    if (index >= 0) return { name: `api-token-${index + 1}` };
    // Only managed tokens can be in the table: anything else costs no query.
    if (!token.startsWith(MANAGED_TOKEN_PREFIX)) return undefined;

    const found = await this.lookUp(hashToken(token), suspect);
    if (
      found === null ||
      (found.expiresAt !== null && found.expiresAt <= Date.now())
    ) {
      return undefined;
    }
    return { name: found.name };
  }

  private async lookUp(
    hash: Buffer,
    suspect: boolean,
  ): Promise<LookedUpToken | null> {
    const key = hash.toString('base64');
    const cached = this.found.get(key) ?? this.notFound.get(key);
    if (cached !== undefined) return cached.value;
    let lookup = this.pending.get(key);
    if (lookup === undefined) {
      const known = this.known.has(key);
      if (suspect && !known) return null;
      const query = known
        ? this.query(hash)
        : this.unknownLookUps.run(() => this.query(hash));
      lookup = query.finally(() => this.pending.delete(key));
      this.pending.set(key, lookup);
    }
    const found = await lookup;
    this.remember(key, found);
    return found;
  }

  private remember(key: string, found: LookedUpToken | null): void {
    if (found === null) {
      this.notFound.set(key, null);
      this.known.delete(key);
      return;
    }
    this.found.set(key, found);
    this.known.delete(key);
    if (this.known.size >= KNOWN_MAX_ENTRIES) {
      const [oldest] = this.known;
      if (oldest !== undefined) this.known.delete(oldest);
    }
    this.known.add(key);
  }

  // A database that cannot answer is the exception filter's to turn into 503.
  private async query(hash: Buffer): Promise<LookedUpToken | null> {
    const token = await this.tokens.findActive(hash);
    return token === undefined
      ? null
      : { name: token.name, expiresAt: token.expiresAt?.getTime() ?? null };
  }
}
