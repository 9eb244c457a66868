import type { Environment } from './environment.js';
import { authOptionsFrom, plantsOptionsFrom } from './package-options.js';
import type { ServiceApiTokens } from './service-api-tokens.js';

describe("package-options: the service's settings as the modules' options", () => {
  // Each setting a value of its own, so that one read in another's place shows.
  const env = {
    TOKEN_STORE_MAX_TOKENS: 1,
    TOKEN_SYNC_MAX_STALENESS_MS: 2,
    TOKEN_RELOAD_INTERVAL_MS: 3,
    TOKEN_LOOKUP_CONCURRENCY: 4,
    AUTH_FAILURE_LIMIT: 5,
    AUTH_FAILURE_WINDOW_MS: 6,
    TOKEN_RATE_LIMIT: 7,
    TOKEN_RATE_WINDOW_MS: 8,
    BODY_LIMIT: '9kb',
    DATABASE_REQUEST_TIMEOUT_MS: 10,
    INSERT_QUEUE_LIMIT: 11,
    INSERT_QUEUE_WAIT_MS: 12,
  } as Environment;

  it('gives AuthModule the accepted tokens and each of its settings', () => {
    const accepted = ['a-hash'];
    expect(
      authOptionsFrom(env, { accepted } as unknown as ServiceApiTokens),
    ).toEqual({
      tokens: accepted,
      tokenStoreMaxTokens: 1,
      tokenSyncMaxStalenessMs: 2,
      tokenReloadIntervalMs: 3,
      tokenLookupConcurrency: 4,
      authFailureLimit: 5,
      authFailureWindowMs: 6,
      tokenRateLimit: 7,
      tokenRateWindowMs: 8,
    });
  });

  it('gives PlantsModule each of its settings', () => {
    expect(plantsOptionsFrom(env)).toEqual({
      bodyLimit: '9kb',
      databaseRequestTimeoutMs: 10,
      insertQueueLimit: 11,
      insertQueueWaitMs: 12,
    });
  });
});
