import { validateEnvironment } from '../config/environment.js';
import type { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokenVerifier } from './api-token.verifier.js';
import type { ApiTokensService } from './api-tokens.service.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { hashToken } from './token-hash.js';

const MANAGED = 'pst_managed-token-0123456789abcdefghijklmnopqrstuv';

function tableWith(rows: Partial<ApiTokenEntity>[]) {
  const findActive = vi.fn(async (hash: Buffer) => {
    const row = rows.find((candidate) => candidate.tokenHash?.equals(hash));
    return row === undefined
      ? undefined
      : ({ expiresAt: null, revokedAt: null, ...row } as ApiTokenEntity);
  });
  return { service: { findActive } as unknown as ApiTokensService, findActive };
}

function verifierWith(
  table: ApiTokensService,
  env: Record<string, string> = {},
) {
  return new ApiTokenVerifier(
    new ConfiguredTokens(
      ['first-token-0123456789', 'second-token-0123456789'].map(hashToken),
    ),
    table,
    validateEnvironment({ DATABASE_URL: 'postgres://u:p@db/test', ...env }),
  );
}

describe('ApiTokenVerifier', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts configured tokens without asking the database', async () => {
    const { service, findActive } = tableWith([]);
    await expect(
      verifierWith(service).verify('second-token-0123456789'),
    ).resolves.toEqual({ name: 'api-token-2' });
    expect(findActive).not.toHaveBeenCalled();
  });

  it('never asks the database about a token without the managed prefix', async () => {
    const { service, findActive } = tableWith([]);
    await expect(
      verifierWith(service).verify('guess-0123456789'),
    ).resolves.toBeUndefined();
    expect(findActive).not.toHaveBeenCalled();
  });

  it('accepts an active managed token and caches the answer', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
    ]);
    const verifier = verifierWith(service);

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    expect(findActive).toHaveBeenCalledTimes(1);
  });

  it('asks once for many concurrent requests with one token', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
    ]);
    const verifier = verifierWith(service);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => verifier.verify(MANAGED)),
    );
    expect(answers).toEqual(Array(20).fill({ name: 'ci' }));
    expect(findActive).toHaveBeenCalledTimes(1);
  });

  it('caches an unknown managed token too, then asks again after the TTL', async () => {
    vi.useFakeTimers();
    const { service, findActive } = tableWith([]);
    const verifier = verifierWith(service, { TOKEN_CACHE_TTL_MS: '5000' });

    await verifier.verify(MANAGED);
    await verifier.verify(MANAGED);
    expect(findActive).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(5001);
    await verifier.verify(MANAGED);
    expect(findActive).toHaveBeenCalledTimes(2);
  });

  it('refuses a cached token once its expiry passes, without waiting for the TTL', async () => {
    vi.useFakeTimers();
    const expiresAt = new Date(Date.now() + 1000);
    const { service } = tableWith([
      { name: 'short', tokenHash: hashToken(MANAGED), expiresAt },
    ]);
    const verifier = verifierWith(service, { TOKEN_CACHE_TTL_MS: '30000' });

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'short' });
    vi.advanceTimersByTime(1001);
    await expect(verifier.verify(MANAGED)).resolves.toBeUndefined();
  });

  it('passes on the error of a table that cannot be read (the filter answers 503), and caches nothing', async () => {
    const down = Object.assign(new Error('down'), { code: 'ECONNREFUSED' });
    const findActive = vi.fn().mockRejectedValue(down);
    const verifier = verifierWith({
      findActive,
    } as unknown as ApiTokensService);

    await expect(verifier.verify(MANAGED)).rejects.toBe(down);
    await expect(verifier.verify(MANAGED)).rejects.toBe(down);
    expect(findActive).toHaveBeenCalledTimes(2);
  });
});
