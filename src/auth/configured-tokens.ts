import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

async function readOrCreateDevelopmentToken(dataDir: string): Promise<string> {
  const path = join(dataDir, DEVELOPMENT_TOKEN_FILE);
  const stored = await readFile(path, 'utf8').then(
    (text) => text.trim(),
    () => '',
  );
  if (stored.length > 0) return stored;
  const token = `dev_${randomBytes(32).toString('base64url')}`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  return token;
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
  const token = await readOrCreateDevelopmentToken(env.DATA_DIR);
  return new ConfiguredTokens([hashToken(token)], token);
}
