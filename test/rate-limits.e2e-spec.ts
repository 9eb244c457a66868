import { type RunningApp, startApp } from './support/app.js';
import {
  errorBody,
  newPlantJson,
  postPlant,
  uniqueId,
} from './support/http.js';
import { OTHER_TOKEN } from './support/tokens.js';

describe('failed authentication, per client address', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({
      AUTH_FAILURE_LIMIT: '5',
      AUTH_FAILURE_WINDOW_MS: '60000',
    });
  });
  afterAll(() => service.close());

  it('answers 429 with Retry-After past the limit, while a valid token still gets through', async () => {
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt += 1) {
      statuses.push(
        (
          await postPlant(service.url, '{}', {
            token: `wrong-token-${attempt}`,
          })
        ).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);

    const limited = await postPlant(service.url, '{}', { token: null });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body).toEqual(
      errorBody(429, 'Too many requests; retry later.'),
    );

    expect(
      (await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'))).status,
    ).toBe(200);
  });
});

describe('per token, when configured', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp({
      TOKEN_RATE_LIMIT: '3',
      TOKEN_RATE_WINDOW_MS: '60000',
    });
  });
  afterAll(() => service.close());

  it('answers 429 to a token past its limit, and not to another token', async () => {
    const statuses: number[] = [];
    for (let request = 0; request < 5; request += 1) {
      statuses.push(
        (await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'))).status,
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
    );
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.body).toEqual(errorBody(429));

    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
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
