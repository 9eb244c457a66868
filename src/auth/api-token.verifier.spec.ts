import type { ApiTokenEntity } from './api-token.entity.js';
import { ApiTokenVerifier } from './api-token.verifier.js';
import { AuthSettings } from './auth-module.options.js';
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
  options: ConstructorParameters<typeof AuthSettings>[0] = {},
) {
  return new ApiTokenVerifier(
    new ConfiguredTokens(
      ['first-token-0123456789', 'second-token-0123456789'].map(hashToken),
    ),
    table,
    new AuthSettings(options),
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
    const verifier = verifierWith(service, { tokenCacheTtlMs: 5000 });

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
    const verifier = verifierWith(service, { tokenCacheTtlMs: 30000 });

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'short' });
    vi.advanceTimersByTime(1001);
    await expect(verifier.verify(MANAGED)).resolves.toBeUndefined();
  });

  it('asks nothing about an unknown token for a suspect caller', async () => {
    const { service, findActive } = tableWith([]);
    await expect(
      verifierWith(service).verify(MANAGED, { suspect: true }),
    ).resolves.toBeUndefined();
    expect(findActive).not.toHaveBeenCalled();
  });

  it('still accepts, for a suspect caller, configured tokens and managed tokens seen valid, even once their cache entry has expired', async () => {
    vi.useFakeTimers();
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
    ]);
    const verifier = verifierWith(service, { tokenCacheTtlMs: 5000 });
    await expect(
      verifier.verify('first-token-0123456789', { suspect: true }),
    ).resolves.toEqual({ name: 'api-token-1' });
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    await expect(verifier.verify(MANAGED, { suspect: true })).resolves.toEqual({
      name: 'ci',
    });
    vi.advanceTimersByTime(5001);
    await expect(verifier.verify(MANAGED, { suspect: true })).resolves.toEqual({
      name: 'ci',
    });
    expect(findActive).toHaveBeenCalledTimes(2);
  });

  it('runs at most tokenLookupConcurrency look-ups of unknown tokens at a time, and a known token passes them', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
    ]);
    const verifier = verifierWith(service, {
      tokenLookupConcurrency: 2,
      tokenCacheTtlMs: 0,
    });
    await verifier.verify(MANAGED);
    findActive.mockClear();

    let inFlight = 0;
    let mostInFlight = 0;
    const releases: (() => void)[] = [];
    findActive.mockImplementation(async (hash: Buffer) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      if (!hash.equals(hashToken(MANAGED)))
        await new Promise<void>((resolve) => releases.push(resolve));
      inFlight -= 1;
      return hash.equals(hashToken(MANAGED))
        ? ({ name: 'ci', expiresAt: null, revokedAt: null } as ApiTokenEntity)
        : undefined;
    });
    const guesses = Array.from({ length: 20 }, (_, index) =>
      verifier.verify(`pst_guess-${index}`),
    );
    await vi.waitFor(() => expect(releases).toHaveLength(2));
    // The known token is answered while both slots are held by unknown ones.
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    for (let released = 0; released < 20; released += 1) {
      await vi.waitFor(() => expect(releases.length).toBeGreaterThan(0));
      releases.shift()?.();
    }
    await expect(Promise.all(guesses)).resolves.toEqual(
      Array(20).fill(undefined),
    );
    expect(mostInFlight).toBe(3);
    expect(findActive).toHaveBeenCalledTimes(21);
  });

  it('keeps a valid token cached however many unknown tokens come after it', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
    ]);
    const verifier = verifierWith(service);
    await verifier.verify(MANAGED);
    for (let index = 0; index < 10_050; index += 1)
      await verifier.verify(`pst_guess-${index}`);
    findActive.mockClear();
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    expect(findActive).not.toHaveBeenCalled();
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
