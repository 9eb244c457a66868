import { ApiError } from '../errors/api-error.js';
import type { ApiTokenEntity } from '../managed-tokens/api-token.entity.js';
import { AuthSettings } from './auth-module.options.js';
import { ApiTokenVerifier, type HeldTokens } from './api-token.verifier.js';
import type { ApiTokensService } from '../managed-tokens/api-tokens.service.js';
import { ActiveTokens, tokenKey } from '../managed-tokens/active-tokens.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { hashToken } from '../managed-tokens/token-hash.js';
import { TokenVerifier } from './token-verifier.js';

const MANAGED = 'pst_managed-token-0123456789abcdefghijklmnopqrstuv';
const OTHER_MANAGED = 'pst_other-token-0123456789abcdefghijklmnopqrstuvw';

/** The table, as ApiTokensService would read it; counts its look-ups. */
function tableWith(rows: Partial<ApiTokenEntity>[]) {
  const findActive = vi.fn(async (hash: Buffer) => {
    const row = rows.find((candidate) => candidate.tokenHash?.equals(hash));
    return row === undefined
      ? undefined
      : ({ expiresAt: null, revokedAt: null, ...row } as ApiTokenEntity);
  });
  return { service: { findActive } as unknown as ApiTokensService, findActive };
}

/** A real ActiveTokens behind the store's face, with its staleness set by the test. */
function heldTokens(
  rows: { name: string; token: string; expiresAt?: Date }[],
  { maxTokens = 100, stale = false } = {},
) {
  const tokens = new ActiveTokens(maxTokens);
  tokens.replaceAll(
    rows.map((row) => ({
      name: row.name,
      tokenHash: hashToken(row.token),
      expiresAt: row.expiresAt ?? null,
    })),
    rows.length > maxTokens,
  );
  const state = { stale, loaded: true };
  const store: HeldTokens = {
    find: (key) => tokens.find(key),
    get complete() {
      return tokens.complete;
    },
    isStale: () => state.stale,
    get loaded() {
      return state.loaded;
    },
  };
  return { store, state };
}

function verifierWith(
  store: HeldTokens,
  table: ApiTokensService,
  options: ConstructorParameters<typeof AuthSettings>[0] = {},
) {
  return new ApiTokenVerifier(
    new ConfiguredTokens(
      ['first-token-0123456789', 'second-token-0123456789'].map(hashToken),
    ),
    store,
    table,
    new AuthSettings(options),
  );
}

describe('ApiTokenVerifier', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts configured tokens, even while the store is stale', async () => {
    const { service, findActive } = tableWith([]);
    const { store } = heldTokens([], { stale: true });
    await expect(
      verifierWith(store, service).verify('second-token-0123456789'),
    ).resolves.toEqual({ name: 'api-token-2' });
    expect(findActive).not.toHaveBeenCalled();
  });

  it('accepts a held managed token and refuses an unknown one, with no database work', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
      { name: 'other', tokenHash: hashToken(OTHER_MANAGED) },
    ]);
    const { store } = heldTokens([{ name: 'ci', token: MANAGED }]);
    const verifier = verifierWith(store, service);

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    await expect(verifier.verify(MANAGED, { suspect: true })).resolves.toEqual({
      name: 'ci',
    });
    // In the table but not held: the store is complete, so it is not active.
    await expect(verifier.verify(OTHER_MANAGED)).resolves.toBeUndefined();
    await expect(verifier.verify('pst_guess')).resolves.toBeUndefined();
    await expect(verifier.verify('guess-0123456789')).resolves.toBeUndefined();
    expect(findActive).not.toHaveBeenCalled();
  });

  it('refuses a held token once its expiry passes', async () => {
    vi.useFakeTimers();
    const { service } = tableWith([]);
    const { store } = heldTokens([
      {
        name: 'short',
        token: MANAGED,
        expiresAt: new Date(Date.now() + 1000),
      },
    ]);
    const verifier = verifierWith(store, service);

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'short' });
    vi.advanceTimersByTime(1000);
    await expect(verifier.verify(MANAGED)).resolves.toBeUndefined();
  });

  it('answers a managed token 503 while the store is stale, held or not', async () => {
    const { service, findActive } = tableWith([]);
    const { store, state } = heldTokens([{ name: 'ci', token: MANAGED }]);
    const verifier = verifierWith(store, service);
    state.stale = true;

    for (const token of [MANAGED, 'pst_guess']) {
      const refusal = await verifier.verify(token).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(ApiError);
      expect((refusal as ApiError).getStatus()).toBe(503);
    }
    expect(findActive).not.toHaveBeenCalled();
    state.stale = false;
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
  });

  it('past the store bound, looks up a token it does not hold, never for a suspect caller', async () => {
    const { service, findActive } = tableWith([
      { name: 'ci', tokenHash: hashToken(MANAGED) },
      { name: 'other', tokenHash: hashToken(OTHER_MANAGED) },
    ]);
    const { store } = heldTokens(
      [
        { name: 'ci', token: MANAGED },
        { name: 'other', token: OTHER_MANAGED },
      ],
      { maxTokens: 1 },
    );
    const verifier = verifierWith(store, service);

    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    expect(findActive).not.toHaveBeenCalled();
    await expect(
      verifier.verify(OTHER_MANAGED, { suspect: true }),
    ).resolves.toBeUndefined();
    expect(findActive).not.toHaveBeenCalled();
    await expect(verifier.verify(OTHER_MANAGED)).resolves.toEqual({
      name: 'other',
    });
    await expect(verifier.verify('pst_guess')).resolves.toBeUndefined();
    expect(findActive).toHaveBeenCalledTimes(2);
  });

  it('past the store bound, runs at most TOKEN_LOOKUP_CONCURRENCY look-ups at a time, one per token', async () => {
    const { service, findActive } = tableWith([]);
    const { store } = heldTokens(
      [
        { name: 'ci', token: MANAGED },
        { name: 'other', token: OTHER_MANAGED },
      ],
      { maxTokens: 1 },
    );
    const verifier = verifierWith(store, service, {
      tokenLookupConcurrency: 2,
    });
    let inFlight = 0;
    let mostInFlight = 0;
    const releases: (() => void)[] = [];
    findActive.mockImplementation(async () => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise<void>((resolve) => releases.push(resolve));
      inFlight -= 1;
      return undefined;
    });
    const guesses = Array.from({ length: 20 }, (_, index) =>
      verifier.verify(`pst_guess-${index % 10}`),
    );
    await vi.waitFor(() => expect(releases).toHaveLength(2));
    // A held token is answered while both slots are taken.
    await expect(verifier.verify(MANAGED)).resolves.toEqual({ name: 'ci' });
    for (let released = 0; released < 10; released += 1) {
      await vi.waitFor(() => expect(releases.length).toBeGreaterThan(0));
      releases.shift()?.();
    }
    await expect(Promise.all(guesses)).resolves.toEqual(
      Array(20).fill(undefined),
    );
    expect(mostInFlight).toBe(2);
    expect(findActive).toHaveBeenCalledTimes(10);
  });

  it('finds a token by the key the store holds it under', () => {
    const { store } = heldTokens([{ name: 'ci', token: MANAGED }]);
    expect(store.find(tokenKey(hashToken(MANAGED)))).toEqual({
      name: 'ci',
      expiresAt: null,
    });
  });
});

describe('ApiTokenVerifier, at its edges', () => {
  it('is not ready before the store has loaded, and stays ready once it has, stale or not', () => {
    const { service } = tableWith([]);
    const { store, state } = heldTokens([]);
    const verifier = verifierWith(store, service);
    state.loaded = false;
    state.stale = true;
    expect(verifier.isReady()).toBe(false);
    state.loaded = true;
    state.stale = false;
    expect(verifier.isReady()).toBe(true);
    // Out of touch later: the database is every replica's, so readiness stays (issue 42).
    state.stale = true;
    expect(verifier.isReady()).toBe(true);
  });

  it("a verifier of its own (a host's) is ready unless it says otherwise", () => {
    class Fixed extends TokenVerifier {
      verify(token: string) {
        return Promise.resolve(token === 'ok' ? { name: 'fixed' } : undefined);
      }
    }
    expect(new Fixed().isReady()).toBe(true);
  });

  it('names the first configured token api-token-1', async () => {
    const { service } = tableWith([]);
    const { store } = heldTokens([]);
    await expect(
      verifierWith(store, service).verify('first-token-0123456789'),
    ).resolves.toEqual({ name: 'api-token-1' });
  });

  it('refuses a token without the managed prefix at once, even while the store is stale', async () => {
    const { service } = tableWith([]);
    const { store } = heldTokens([], { stale: true });
    await expect(
      verifierWith(store, service).verify('guess-0123456789'),
    ).resolves.toBeUndefined();
  });

  it('says why a managed token gets 503 while the store is stale', async () => {
    const { service } = tableWith([]);
    const { store } = heldTokens([], { stale: true });
    await expect(
      verifierWith(store, service).verify(MANAGED),
    ).rejects.toMatchObject({
      message: 'Managed tokens cannot be checked right now; retry later.',
      headers: { 'Retry-After': '2' },
    });
  });

  it('past the store bound, looks a token up again once its last look-up has ended', async () => {
    const rows: Partial<ApiTokenEntity>[] = [];
    const { service, findActive } = tableWith(rows);
    const { store } = heldTokens(
      [
        { name: 'a', token: 'pst_a-0123456789' },
        { name: 'b', token: 'pst_b-0123456789' },
      ],
      { maxTokens: 1 },
    );
    const verifier = verifierWith(store, service);
    await expect(verifier.verify(MANAGED)).resolves.toBeUndefined();
    rows.push({ name: 'created since', tokenHash: hashToken(MANAGED) });
    await expect(verifier.verify(MANAGED)).resolves.toEqual({
      name: 'created since',
    });
    expect(findActive).toHaveBeenCalledTimes(2);
  });
});
