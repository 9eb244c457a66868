import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { MockInstance } from 'vitest';
import { ApiTokensService } from '../src/lib/managed-tokens/api-tokens.service.js';
import { TokenVerifier } from '../src/lib/auth/token-verifier.js';
import { type RunningApp, startApp, useApp } from './support/app.js';
import { eventually } from './support/poll.js';
import { errorBody } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { OTHER_TOKEN, TOKEN } from './support/tokens.js';

/** The statuses of `count` requests sent one after another, the nth by `send(n)`. */
async function statusesInTurn(
  count: number,
  send: (index: number) => Promise<{ status: number }>,
): Promise<number[]> {
  const statuses: number[] = [];
  for (let index = 0; index < count; index += 1)
    statuses.push((await send(index)).status);
  return statuses;
}

describe('failed authentication, per client address', () => {
  const service = useApp({
    AUTH_FAILURE_LIMIT: '5',
    AUTH_FAILURE_WINDOW_MS: '60000',
  });

  it('answers 429 with Retry-After past the limit, while a valid token still gets through', async () => {
    const statuses = await statusesInTurn(8, (attempt) =>
      postPlant(service().url, '{}', { token: `wrong-token-${attempt}` }),
    );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);

    const limited = await postPlant(service().url, '{}', { token: null });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toEqual(
      errorBody(429, 'Too many requests; retry later.'),
    );

    expect(
      (await postPlant(service().url, newPlantJson(uniqueId(), 'Fern'))).status,
    ).toBe(200);
  });
});

describe('per token, when configured', () => {
  const service = useApp({
    TOKEN_RATE_LIMIT: '3',
    TOKEN_RATE_WINDOW_MS: '60000',
  });

  it('answers 429 to a token past its limit, and not to another token', async () => {
    const statuses = await statusesInTurn(5, () =>
      postPlant(service().url, newPlantJson(uniqueId(), 'Fern')),
    );
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await postPlant(
      service().url,
      newPlantJson(uniqueId(), 'Fern'),
    );
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.body).toEqual(errorBody(429));

    expect(
      (
        await postPlant(service().url, newPlantJson(uniqueId(), 'Fern'), {
          token: OTHER_TOKEN,
        })
      ).status,
    ).toBe(200);
  });
});

it('has no per-token limit by default', async () => {
  const service = await startApp();
  try {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        postPlant(service.url, newPlantJson(uniqueId(), 'Fern')),
      ),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(
      new Set([200]),
    );
  } finally {
    await service.close();
  }
});

/** POST /plants from a given loopback source address, as a client behind it would. */
function postFrom(
  url: string,
  localAddress: string,
  token: string,
  json = '{}',
): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${url}/plants`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(json);
  });
}

const guess = (): string => `pst_${randomBytes(32).toString('base64url')}`;

/** Counts ApiTokensService.findActive (the per-request look-up) and can hold it. */
function countLookUps(tokens: ApiTokensService) {
  const counts = { inFlight: 0, mostInFlight: 0 };
  // Look-ups wait for this before reaching the database: a test can hold them.
  const gate = { hold: Promise.resolve() };
  const findActive = tokens.findActive.bind(tokens);
  const spy = vi
    .spyOn(tokens, 'findActive')
    .mockImplementation(async (hash) => {
      counts.inFlight += 1;
      counts.mostInFlight = Math.max(counts.mostInFlight, counts.inFlight);
      try {
        await gate.hold;
        return await findActive(hash);
      } finally {
        counts.inFlight -= 1;
      }
    });
  return { spy, counts, gate };
}

describe('what failed authentication costs the database', () => {
  const service = useApp({
    AUTH_FAILURE_LIMIT: '5',
    AUTH_FAILURE_WINDOW_MS: '60000',
  });
  let tokens: ApiTokensService;
  let lookUps: MockInstance<ApiTokensService['findActive']>;

  beforeAll(async () => {
    tokens = service().app.get(ApiTokensService);
    lookUps = countLookUps(tokens).spy;
  });
  beforeEach(() => {
    lookUps.mockClear();
  });

  it('looks up no token at all: guesses from many addresses are refused from memory', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        postFrom(service().url, `127.0.1.${index + 1}`, guess()),
      ),
    );
    expect(new Set(answers)).toEqual(new Set([401]));
    expect(lookUps).not.toHaveBeenCalled();
  });

  it('answers 429 past the limit, and still serves configured and managed tokens from that address', async () => {
    const { token } = await tokens.create(`known-${process.pid}-${uniqueId()}`);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 7; attempt += 1)
      statuses.push(await postFrom(service().url, '127.0.0.3', guess()));
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(2).fill(429)]);

    expect(
      await postFrom(
        service().url,
        '127.0.0.3',
        TOKEN,
        newPlantJson(uniqueId(), 'Fern'),
      ),
    ).toBe(200);
    // The new token reaches the store through a notification: polled, not raced.
    await eventually(
      'the new managed token accepted from a blocked address',
      async () =>
        (await postFrom(
          service().url,
          '127.0.0.3',
          token,
          newPlantJson(uniqueId(), 'Fern'),
        )) === 200
          ? true
          : undefined,
    );
    expect(lookUps).not.toHaveBeenCalled();
  });
});

describe('what failed authentication costs the database past TOKEN_STORE_MAX_TOKENS', () => {
  let service: RunningApp;
  let lookUps: MockInstance<ApiTokensService['findActive']>;
  let counts: { inFlight: number; mostInFlight: number };
  let gate: { hold: Promise<void> };

  beforeAll(async () => {
    // Two active tokens at least, and room for one: the store is incomplete.
    const setup = await startApp();
    const tokens = setup.app.get(ApiTokensService);
    for (const label of ['a', 'b'])
      await tokens.create(`overflow-${label}-${process.pid}-${uniqueId()}`);
    await setup.close();
    service = await startApp({
      AUTH_FAILURE_LIMIT: '5',
      AUTH_FAILURE_WINDOW_MS: '60000',
      TOKEN_LOOKUP_CONCURRENCY: '2',
      TOKEN_STORE_MAX_TOKENS: '1',
    });
    ({
      spy: lookUps,
      counts,
      gate,
    } = countLookUps(service.app.get(ApiTokensService)));
  });
  beforeEach(() => {
    lookUps.mockClear();
    counts.mostInFlight = 0;
  });
  afterAll(() => service.close());

  it('looks up no token for an address past its limit, answering 429 at once', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 12; attempt += 1)
      statuses.push(await postFrom(service.url, '127.0.0.2', guess()));

    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect(lookUps).toHaveBeenCalledTimes(5);
  });

  it('looks up at most TOKEN_LOOKUP_CONCURRENCY unknown tokens at a time, the rest waiting their turn', async () => {
    const verifications = vi.spyOn(service.app.get(TokenVerifier), 'verify');
    let release = (): void => undefined;
    gate.hold = new Promise((resolve) => (release = resolve));
    try {
      const answers = Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          postFrom(service.url, `127.0.1.${index + 1}`, guess()),
        ),
      );
      // Every request has reached the verifier while the first look-ups are held.
      await vi.waitFor(() => expect(verifications).toHaveBeenCalledTimes(40), {
        timeout: 30_000,
      });
      await vi.waitFor(() => expect(lookUps).toHaveBeenCalledTimes(2));
      expect(lookUps).toHaveBeenCalledTimes(2);

      release();
      expect(new Set(await answers)).toEqual(new Set([401]));
      expect(lookUps).toHaveBeenCalledTimes(40);
      expect(counts.mostInFlight).toBe(2);
    } finally {
      release();
      gate.hold = Promise.resolve();
      verifications.mockRestore();
    }
  });
});
