import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { tokenKey } from '../managed-tokens/active-tokens.js';
import { ActiveTokenStore } from '../managed-tokens/active-tokens.store.js';
import {
  ApiTokensService,
  MANAGED_TOKEN_PREFIX,
} from '../managed-tokens/api-tokens.service.js';
import { AuthSettings } from './auth-module.options.js';
import { ConcurrencyLimit } from './concurrency-limit.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { hashToken, indexOfTokenHash } from '../managed-tokens/token-hash.js';
import {
  AuthenticatedClient,
  TokenVerifier,
  type VerifyOptions,
} from './token-verifier.js';

/** What the verifier needs of the store (the tests hand it a store without a database). */
export type HeldTokens = Pick<
  ActiveTokenStore,
  'find' | 'complete' | 'isStale' | 'loaded'
>;

/**
 * AuthModule's `tokens` and the ActiveTokenStore's: one SHA-256 and one map look-up, no database
 * work for an unknown token unless the store is full (docs/tokens.md).
 */
@Injectable()
export class ApiTokenVerifier extends TokenVerifier {
  private readonly unheldLookUps: ConcurrencyLimit;
  // One query per token at a time, however many requests carry it.
  private readonly pending = new Map<string, Promise<string | false>>();

  constructor(
    private readonly configured: ConfiguredTokens,
    @Inject(ActiveTokenStore) private readonly store: HeldTokens,
    private readonly tokens: ApiTokensService,
    settings: AuthSettings,
  ) {
    super();
    this.unheldLookUps = new ConcurrencyLimit(settings.tokenLookupConcurrency);
  }

  /** Not ready until the store has loaded once; a later outage is every replica's, so not a reason (issue 42). */
  override isReady(): boolean {
    return this.store.loaded;
  }

  /** False while the store is stale: managed tokens are then answered 503. */
  override isCurrent(): boolean {
    return !this.store.isStale();
  }

  async verify(
    token: string,
    { suspect = false }: VerifyOptions = {},
  ): Promise<AuthenticatedClient | undefined> {
    const hash = hashToken(token);
    const index = indexOfTokenHash(hash, this.configured.hashes);
    if (index >= 0) return { name: `api-token-${index + 1}` };
    // Only managed tokens can be in the table.
    if (!token.startsWith(MANAGED_TOKEN_PREFIX)) return undefined;
    if (this.store.isStale()) {
      throw ApiError.serviceUnavailable(
        'Managed tokens cannot be checked right now; retry later.',
      );
    }
    // Found by its SHA-256: equal hashes mean the token itself, and the time a map takes
    // to find a 256-bit digest of a random secret tells a guesser nothing usable.
    const key = tokenKey(hash);
    const held = this.store.find(key);
    if (held !== undefined) return { name: held.name };
    if (this.store.complete || suspect) return undefined;
    const name = await this.lookUp(key, hash);
    return name === false ? undefined : { name };
  }

  // Past the store's bound only. A database that cannot answer is the filter's 503.
  private lookUp(key: string, hash: Buffer): Promise<string | false> {
    let lookup = this.pending.get(key);
    if (lookup === undefined) {
      lookup = this.unheldLookUps
        .run(() => this.tokens.findActive(hash))
        .then((found) => found?.name ?? false)
        .finally(() => this.pending.delete(key));
      this.pending.set(key, lookup);
    }
    return lookup;
  }
}
