import type { Type } from '@nestjs/common';
import { definedOnly } from '../dynamic-modules/defined-only.js';
import { SettingsOf } from '../dynamic-modules/module-options.js';
import type { TokenVerifier } from './token-verifier.js';

/** How AuthModule checks tokens; every field has a default. Async-able (forRootAsync). */
export interface AuthModuleOptions {
  /** Bearer tokens accepted as they are (kept only as hashes), besides managed tokens. */
  tokens?: readonly string[];
  /** Most active managed tokens held in memory; past it, others are looked up per request. */
  tokenStoreMaxTokens?: number;
  /** Longest managed tokens are answered from memory without database contact; past it, 503. */
  tokenSyncMaxStalenessMs?: number;
  /** A full reload of the active tokens this often: the backstop for a missed notification. */
  tokenReloadIntervalMs?: number;
  /** @deprecated tokenReloadIntervalMs's earlier name: it sets that option where unset. */
  tokenResyncIntervalMs?: number;
  /** Past tokenStoreMaxTokens only: database look-ups at once of tokens not held. */
  tokenLookupConcurrency?: number;
  /** Failed authentications allowed per client address and window before 429. */
  authFailureLimit?: number;
  authFailureWindowMs?: number;
  /** Requests allowed per token and window; 0: no per-token limit. */
  tokenRateLimit?: number;
  tokenRateWindowMs?: number;
}

/** Chosen when the module is defined (forRoot and forRootAsync alike): they decide its providers. */
export interface AuthModuleExtras {
  /** A TokenVerifier subclass Nest builds in AuthModule; default: the `tokens` and the api_tokens table. */
  tokenVerifier?: Type<TokenVerifier>;
  /** true: every route needs a token unless @Public(); false (default): only @RequiresToken() routes. */
  globalGuard?: boolean;
  /** The TypeORM connection name of the api_tokens table; default: the default connection. */
  dataSource?: string;
}

/** A configured token: at least 16 printable ASCII characters, nothing a guess finds. */
export const BEARER_TOKEN_FORMAT = /^[\x21-\x7e]{16,}$/;

/** Every option but a deprecated name, with its default. */
type CurrentAuthOptions = Omit<
  Required<AuthModuleOptions>,
  'tokenResyncIntervalMs'
>;

export const AUTH_DEFAULTS: Readonly<CurrentAuthOptions> = {
  tokens: [],
  tokenStoreMaxTokens: 100_000,
  tokenSyncMaxStalenessMs: 5_000,
  tokenReloadIntervalMs: 60_000,
  tokenLookupConcurrency: 2,
  authFailureLimit: 30,
  authFailureWindowMs: 60_000,
  tokenRateLimit: 0,
  tokenRateWindowMs: 60_000,
};

/** The options with their defaults, checked at start; the tokens are ConfiguredTokens' (hashes only). */
export class AuthSettings extends SettingsOf<
  Omit<CurrentAuthOptions, 'tokens'>
>() {
  constructor(options: AuthModuleOptions = {}) {
    const { tokenResyncIntervalMs, ...current } = definedOnly(options);
    const given: CurrentAuthOptions = {
      ...AUTH_DEFAULTS,
      ...(tokenResyncIntervalMs === undefined
        ? {}
        : { tokenReloadIntervalMs: tokenResyncIntervalMs }),
      ...current,
    };
    const atLeast = (key: keyof typeof given, min: number): number => {
      const value = given[key];
      if (
        typeof value !== 'number' ||
        !Number.isSafeInteger(value) ||
        value < min
      )
        throw new Error(
          `AuthModule: ${key} must be an integer of at least ${min}.`,
        );
      return value;
    };
    const limits = {
      tokenStoreMaxTokens: atLeast('tokenStoreMaxTokens', 1),
      tokenSyncMaxStalenessMs: atLeast('tokenSyncMaxStalenessMs', 1_000),
      tokenReloadIntervalMs: atLeast('tokenReloadIntervalMs', 1_000),
      tokenLookupConcurrency: atLeast('tokenLookupConcurrency', 1),
      authFailureLimit: atLeast('authFailureLimit', 1),
      authFailureWindowMs: atLeast('authFailureWindowMs', 1),
      tokenRateLimit: atLeast('tokenRateLimit', 0),
      tokenRateWindowMs: atLeast('tokenRateWindowMs', 1),
    };
    // Never names the token: the message may be logged.
    given.tokens.forEach((token, index) => {
      if (!BEARER_TOKEN_FORMAT.test(token))
        throw new Error(
          `AuthModule: tokens[${index}] must be at least 16 printable ASCII characters.`,
        );
    });
    super(limits);
  }
}

/** Whether the bearer guard applies to every route or to marked ones only. */
export class AuthGuardScope {
  constructor(readonly global: boolean) {}
}
