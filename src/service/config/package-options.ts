import type {
  AuthModuleOptions,
  PlantsModuleOptions,
} from '../../lib/index.js';
import type { Environment } from './environment.js';
import type { ServiceApiTokens } from './service-api-tokens.js';

/** The one place the service turns its settings into the modules' options (which never read the environment). */
export function authOptionsFrom(
  env: Environment,
  tokens: ServiceApiTokens,
): AuthModuleOptions {
  return {
    tokens: tokens.accepted,
    tokenStoreMaxTokens: env.TOKEN_STORE_MAX_TOKENS,
    tokenSyncMaxStalenessMs: env.TOKEN_SYNC_MAX_STALENESS_MS,
    tokenReloadIntervalMs: env.TOKEN_RELOAD_INTERVAL_MS,
    tokenLookupConcurrency: env.TOKEN_LOOKUP_CONCURRENCY,
    authFailureLimit: env.AUTH_FAILURE_LIMIT,
    authFailureWindowMs: env.AUTH_FAILURE_WINDOW_MS,
    tokenRateLimit: env.TOKEN_RATE_LIMIT,
    tokenRateWindowMs: env.TOKEN_RATE_WINDOW_MS,
  };
}

export function plantsOptionsFrom(env: Environment): PlantsModuleOptions {
  return {
    bodyLimit: env.BODY_LIMIT,
    databaseRequestTimeoutMs: env.DATABASE_REQUEST_TIMEOUT_MS,
    insertQueueLimit: env.INSERT_QUEUE_LIMIT,
    insertQueueWaitMs: env.INSERT_QUEUE_WAIT_MS,
  };
}
