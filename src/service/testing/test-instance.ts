import { randomBytes } from 'node:crypto';

/**
 * What every instance started for a test run has, a process (plant-store/testing) or a
 * container (plant-store/testcontainers). A suite's requests all come from one address, so
 * the per-address limit on failed authentications (30 a minute) would turn its later 401
 * checks into 429s: the highest the setting allows (a suite that tests the 429 sets its
 * own). Nobody balances a test's service: no drain delay.
 */
export const TEST_INSTANCE_SETTINGS = {
  AUTH_FAILURE_LIMIT: '1000000',
  SHUTDOWN_DELAY_MS: '0',
} as const;

/** A token of the run's own, in the managed tokens' shape (secret scanners know `pst_`). */
export function testInstanceToken(): string {
  return `pst_test_${randomBytes(24).toString('base64url')}`;
}
