import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigurationError,
  validateEnvironment,
} from '../config/environment.js';
import { loadConfiguredTokens } from './configured-tokens.js';
import { StaticTokenVerifier } from './static-token.verifier.js';
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

  it('refuses to start on an external database with no token, naming API_TOKENS', async () => {
    const env = validateEnvironment({
      DATABASE_URL: 'postgres://u:p@db/plants',
      DATA_DIR: dataDir,
    });
    await expect(loadConfiguredTokens(env)).rejects.toThrow(ConfigurationError);
    await expect(loadConfiguredTokens(env)).rejects.toThrow(/API_TOKENS/);
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

describe('StaticTokenVerifier', () => {
  it('names the client by the position of its token, and refuses others', async () => {
    const verifier = new StaticTokenVerifier(
      await loadConfiguredTokens(
        validateEnvironment({
          API_TOKENS: 'first-token-0123456789,second-token-0123456789',
        }),
      ),
    );
    await expect(verifier.verify('second-token-0123456789')).resolves.toEqual({
      name: 'api-token-2',
    });
    await expect(
      verifier.verify('third-token-0123456789'),
    ).resolves.toBeUndefined();
  });
});
