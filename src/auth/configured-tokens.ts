import { join } from 'node:path';
import { readOrCreateSecretFile } from '../common/secret-file.js';
import type { Environment } from '../config/environment.js';
import { hashToken } from './token-hash.js';

const DEVELOPMENT_TOKEN_FILE = 'dev-token';

/** The tokens given by configuration, kept as SHA-256 hashes only. */
export class ConfiguredTokens {
  constructor(
    readonly hashes: readonly Buffer[],
    /** Set only for the development token made for the embedded database. */
    readonly developmentToken?: string,
  ) {}
}

/**
 * API_TOKENS when given. Otherwise, on the embedded database (a developer's machine), a
 * token made once and kept in DATA_DIR. On an external database, none: tokens then come
 * from the api_tokens table (npm run token).
 */
export async function loadConfiguredTokens(
  env: Environment,
): Promise<ConfiguredTokens> {
  if (env.API_TOKENS.length > 0) {
    return new ConfiguredTokens(env.API_TOKENS.map(hashToken));
  }
  if (env.DATABASE_URL !== undefined) return new ConfiguredTokens([]);
  const token = await readOrCreateSecretFile(
    join(env.DATA_DIR, DEVELOPMENT_TOKEN_FILE),
    {
      bytes: 32,
      prefix: 'dev_',
    },
  );
  return new ConfiguredTokens([hashToken(token)], token);
}
