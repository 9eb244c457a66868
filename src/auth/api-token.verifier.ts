import { Injectable } from '@nestjs/common';
import { type Environment, InjectEnvironment } from '../config/environment.js';
import {
  ApiTokensService,
  MANAGED_TOKEN_PREFIX,
} from './api-tokens.service.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { findTokenHash, hashToken } from './token-hash.js';
import { AuthenticatedClient, TokenVerifier } from './token-verifier.js';
import { TtlCache } from './ttl-cache.js';

const CACHE_MAX_ENTRIES = 10_000;

interface LookedUpToken {
  name: string;
  expiresAt: number | null;
}

/**
 * Accepts the tokens of API_TOKENS (compared by hash, in constant time) and the managed
 * tokens of the api_tokens table. Table look-ups, found or not, are cached for
 * TOKEN_CACHE_TTL_MS so the hot path does not query per request: a revocation takes
 * effect within that time, an expiry at once (the cached entry carries the expiry).
 */
@Injectable()
export class ApiTokenVerifier extends TokenVerifier {
  private readonly cache: TtlCache<LookedUpToken | null>;
  // One query per token at a time, however many requests carry it.
  private readonly pending = new Map<string, Promise<LookedUpToken | null>>();

  constructor(
    private readonly configured: ConfiguredTokens,
    private readonly tokens: ApiTokensService,
    @InjectEnvironment() env: Environment,
  ) {
    super();
    this.cache = new TtlCache(env.TOKEN_CACHE_TTL_MS, CACHE_MAX_ENTRIES);
  }

  async verify(token: string): Promise<AuthenticatedClient | undefined> {
    const index = findTokenHash(token, this.configured.hashes);
    if (index >= 0) return { name: `api-token-${index + 1}` };
    // Only managed tokens can be in the table: anything else costs no query.
    if (!token.startsWith(MANAGED_TOKEN_PREFIX)) return undefined;

    const found = await this.lookUp(hashToken(token));
    if (
      found === null ||
      (found.expiresAt !== null && found.expiresAt <= Date.now())
    ) {
      return undefined;
    }
    return { name: found.name };
  }

  private async lookUp(hash: Buffer): Promise<LookedUpToken | null> {
    const key = hash.toString('base64');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached.value;
    let lookup = this.pending.get(key);
    if (lookup === undefined) {
      lookup = this.query(hash).finally(() => this.pending.delete(key));
      this.pending.set(key, lookup);
    }
    const found = await lookup;
    this.cache.set(key, found);
    return found;
  }

  // A database that cannot answer is the exception filter's to turn into 503.
  private async query(hash: Buffer): Promise<LookedUpToken | null> {
    const token = await this.tokens.findActive(hash);
    return token === undefined
      ? null
      : { name: token.name, expiresAt: token.expiresAt?.getTime() ?? null };
  }
}
