import { randomBytes } from 'node:crypto';

/**
 * What every test instance has: the highest failed-authentication limit (a suite's requests
 * share one address) and no drain delay (nobody balances it).
 */
export const TEST_INSTANCE_SETTINGS = {
  AUTH_FAILURE_LIMIT: '1000000',
  SHUTDOWN_DELAY_MS: '0',
} as const;

/** A token of the run's own, in the managed tokens' shape (secret scanners know `pst_`). */
export function testInstanceToken(): string {
  return `pst_test_${randomBytes(24).toString('base64url')}`;
}
