import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfiguredTokens } from '../../lib/auth/configured-tokens.js';
import { hashToken } from '../../lib/managed-tokens/token-hash.js';
import { validateEnvironment } from './environment.js';
import { loadServiceApiTokens } from './service-api-tokens.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';

describe('loadServiceApiTokens', () => {
  const dataDir = useTempFolder('plant-store-tokens-');

  it('takes the tokens of API_TOKENS, which AuthModule keeps as hashes only', async () => {
    const tokens = await loadServiceApiTokens(
      validateEnvironment({
        API_TOKENS: 'first-token-0123456789,second-token-0123456789',
        DATA_DIR: dataDir(),
      }),
    );
    expect(tokens.accepted).toEqual([
      'first-token-0123456789',
      'second-token-0123456789',
    ]);
    expect(tokens.developmentToken).toBeUndefined();
    const configured = ConfiguredTokens.of(tokens.accepted);
    expect(configured.hashes).toEqual([
      hashToken('first-token-0123456789'),
      hashToken('second-token-0123456789'),
    ]);
    expect(JSON.stringify(configured)).not.toContain('first-token');
  });

  it('gives no token on an external database: tokens then come from the api_tokens table', async () => {
    const tokens = await loadServiceApiTokens(
      validateEnvironment({
        DATABASE_URL: 'postgres://u:p@db/plants',
        DATA_DIR: dataDir(),
      }),
    );
    expect(tokens.accepted).toEqual([]);
    expect(tokens.developmentToken).toBeUndefined();
  });

  it('makes a development token once for the embedded database, private to its owner, and reuses it', async () => {
    const env = validateEnvironment({ DATA_DIR: dataDir() });
    const first = await loadServiceApiTokens(env);
    const second = await loadServiceApiTokens(env);

    expect(first.developmentToken).toMatch(/^dev_[\w-]{43}$/);
    expect(second.developmentToken).toBe(first.developmentToken);
    expect((await readFile(join(dataDir(), 'dev-token'), 'utf8')).trim()).toBe(
      first.developmentToken,
    );
    expect((await stat(join(dataDir(), 'dev-token'))).mode & 0o777).toBe(0o600);
    expect(first.accepted).toEqual([first.developmentToken]);
  });
});
