import { inject } from 'vitest';
import { TEST_TOKENS } from './tokens.js';

// The service reads its settings from process.env when it boots: point it at the run's
// database and give it known tokens.
process.env.DATABASE_URL = inject('databaseUrl');
process.env.API_TOKENS = TEST_TOKENS.join(',');
process.env.NODE_ENV = 'test';
// Quiet unless asked: LOG_LEVEL=debug npm test shows the service's own log lines.
process.env.LOG_LEVEL ??= 'fatal';
