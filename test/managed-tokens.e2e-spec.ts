import { setTimeout as sleep } from 'node:timers/promises';
import { ApiTokensService } from '../src/lib/managed-tokens/api-tokens.service.js';
import { type RunningApp, startApp, useApp } from './support/app.js';
import { errorBody } from './support/http.js';
import {
  newPlantJson,
  postPlant,
  uniqueId,
  untilTokenAnswered,
} from './support/plants.js';
import { OTHER_TOKEN } from './support/tokens.js';

const INVALID_TOKEN_CHALLENGE =
  'Bearer realm="plant-store", error="invalid_token"';

/** A create with `token`, which the service must refuse as an invalid token. */
async function refusedAsInvalid(baseUrl: string, token: string) {
  const answer = await postPlant(baseUrl, newPlantJson(uniqueId(), 'Fern'), {
    token,
  });
  expect(answer.status).toBe(401);
  expect(answer.headers.get('www-authenticate')).toBe(INVALID_TOKEN_CHALLENGE);
  return answer;
}

function uniqueName(label: string): string {
  return `${label}-${process.pid}-${uniqueId()}`;
}

describe('managed API tokens', () => {
  const service = useApp();
  let tokens: ApiTokensService;

  beforeAll(async () => {
    tokens = service().app.get(ApiTokensService);
  });

  it('makes recognisable tokens and stores only their hash', async () => {
    const name = uniqueName('hash');
    const { token } = await tokens.create(name);

    expect(token).toMatch(/^pst_[\w-]{43}$/);
    const [row] = (await service().dataSource.query(
      "SELECT encode(token_hash, 'hex') AS hash FROM api_tokens WHERE name = $1",
      [name],
    )) as [{ hash: string }];
    expect(row.hash).toHaveLength(64);
    const everything = JSON.stringify(
      await service().dataSource.query('SELECT * FROM api_tokens'),
    );
    expect(everything).not.toContain(token.slice(4));
  });

  it('accepts a token once created and refuses it once revoked, both told by the database', async () => {
    const name = uniqueName('revoke');
    const { token } = await tokens.create(name);
    // Each change reaches the store through a notification: polled, never raced.
    await untilTokenAnswered(
      service().url,
      token,
      200,
      'the new token accepted',
    );

    expect(await tokens.revoke(name)).toBe(true);
    await untilTokenAnswered(
      service().url,
      token,
      401,
      'the revoked token refused',
    );
    const refused = await refusedAsInvalid(service().url, token);
    expect(refused.body).toEqual(errorBody(401));
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    const { token } = await tokens.create(
      uniqueName('expired'),
      new Date(Date.now() - 1000),
    );
    await refusedAsInvalid(service().url, token);
  });

  it('looks up and counts only active tokens, by the one definition the store reads with', async () => {
    const before = await tokens.countActive();
    const active = await tokens.create(uniqueName('lookup-active'));
    const expired = await tokens.create(
      uniqueName('lookup-expired'),
      new Date(Date.now() - 1000),
    );
    const revoked = await tokens.create(uniqueName('lookup-revoked'));
    expect(await tokens.revoke(revoked.record.name)).toBe(true);

    expect((await tokens.findActive(active.record.tokenHash))?.name).toBe(
      active.record.name,
    );
    expect(await tokens.findActive(expired.record.tokenHash)).toBeUndefined();
    expect(await tokens.findActive(revoked.record.tokenHash)).toBeUndefined();
    // One more: the expired and the revoked one are not counted (spec files run one at a time).
    expect(await tokens.countActive()).toBe(before + 1);
  });

  it('keeps accepting API_TOKENS beside the table', async () => {
    expect(
      (
        await postPlant(service().url, newPlantJson(uniqueId(), 'Fern'), {
          token: OTHER_TOKEN,
        })
      ).status,
    ).toBe(200);
  });
});

describe('a managed token reaching its expiry', () => {
  let service: RunningApp;
  beforeAll(async () => {
    // No reload within the test: a 401 can only come from the expiry the store carries.
    service = await startApp({ TOKEN_RELOAD_INTERVAL_MS: '600000' });
  });
  afterAll(() => service.close());

  it('is accepted before its expiry and refused from then on, while the store still holds it', async () => {
    const expiresAt = Date.now() + 5_000;
    const { token } = await service.app
      .get(ApiTokensService)
      .create(uniqueName('expiring'), new Date(expiresAt));
    await untilTokenAnswered(service.url, token, 200, 'the new token accepted');

    // Polls until the first refusal, with a generous deadline, instead of betting on timing.
    const answers: { sentAt: number; answeredAt: number; status: number }[] =
      [];
    const deadline = expiresAt + 20_000;
    while (Date.now() < deadline && answers.at(-1)?.status !== 401) {
      const sentAt = Date.now();
      const { status } = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Fern'),
        { token },
      );
      answers.push({ sentAt, answeredAt: Date.now(), status });
      await sleep(100);
    }

    expect(answers.at(-1)?.status).toBe(401);
    for (const answer of answers) {
      if (answer.answeredAt < expiresAt) expect(answer.status).toBe(200);
      if (answer.sentAt >= expiresAt) expect(answer.status).toBe(401);
    }
  });
});
