import { inject } from 'vitest';
import {
  type Environment,
  validateEnvironment,
} from '../../src/service/config/environment.js';
import { adapterUnderTest } from './adapter-under-test.js';
import { TEST_TOKENS } from './tokens.js';

/**
 * The settings of a service a test boots in-process: the run's database, known tokens,
 * and `settings` on top, written as environment variables and validated by the service's
 * own schema (so a test cannot give a value production would refuse).
 */
export function testEnvironment(
  settings: Record<string, string> = {},
): Environment {
  return validateEnvironment({
    DATABASE_URL: inject('databaseUrl'),
    API_TOKENS: TEST_TOKENS.join(','),
    NODE_ENV: 'test',
    // Quiet unless asked: LOG_LEVEL=debug npm test shows the service's own log lines.
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'fatal',
    ...adapterUnderTest(),
    ...settings,
  });
}
