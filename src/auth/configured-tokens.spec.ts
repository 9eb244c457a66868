import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateEnvironment } from '../config/environment.js';
import { loadConfiguredTokens } from './configured-tokens.js';
import { hashToken } from './token-hash.js';

describe('loadConfiguredTokens', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'plant-store-tokens-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('hashes the tokens of API_TOKENS and keeps no plain copy', async () => {
    const tokens = await loadConfiguredTokens(
      validateEnvironment({
        API_TOKENS: 'first-token-0123456789,second-token-0123456789',
        DATA_DIR: dataDir,
      }),
    );
    expect(tokens.hashes).toEqual([
      hashToken('first-token-0123456789'),
      hashToken('second-token-0123456789'),
    ]);
    expect(tokens.developmentToken).toBeUndefined();
    expect(JSON.stringify(tokens)).not.toContain('first-token');
  });

  it('gives no token on an external database: tokens then come from the api_tokens table', async () => {
    const tokens = await loadConfiguredTokens(
      validateEnvironment({
        DATABASE_URL: 'postgres://u:p@db/plants',
        DATA_DIR: dataDir,
      }),
    );
    expect(tokens.hashes).toEqual([]);
    expect(tokens.developmentToken).toBeUndefined();
  });

  it('makes a development token once for the embedded database, private to its owner, and reuses it', async () => {
    const env = validateEnvironment({ DATA_DIR: dataDir });
    const first = await loadConfiguredTokens(env);
    const second = await loadConfiguredTokens(env);

    expect(first.developmentToken).toMatch(/^dev_[\w-]{43}$/);
    expect(second.developmentToken).toBe(first.developmentToken);
    expect((await readFile(join(dataDir, 'dev-token'), 'utf8')).trim()).toBe(
      first.developmentToken,
    );
    expect((await stat(join(dataDir, 'dev-token'))).mode & 0o777).toBe(0o600);
    expect(first.hashes).toEqual([hashToken(first.developmentToken ?? '')]);
  });
});
