import { resolve } from 'node:path';
import { adapterUnderTest } from './support/adapter-under-test.js';
import { type Answer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import {
  type ListeningService,
  startReady,
} from './support/service-process.js';

const TESTING_ENTRY = resolve('dist/service/testing/index.js');
type TestingEntry = typeof import('../src/service/testing/index.js');
type Store = Awaited<ReturnType<TestingEntry['startPlantStore']>>;

/** What a client can tell apart in an answer; a request id and a date are each answer's own. */
function seen(answer: Answer): object {
  return {
    status: answer.status,
    type: answer.headers.get('content-type'),
    allow: answer.headers.get('allow'),
    retryAfter: answer.headers.get('retry-after'),
    body: answer.text,
  };
}

/**
 * plant-store/testing starts the service from dist/service-bundle (scripts/bundle-service.mjs),
 * production from dist/service/main.js. Both here on one database, on the project's adapter,
 * asked the same: every answer must be the same.
 */
describe('the service bundle that plant-store/testing starts', () => {
  let store: Store;
  let built: ListeningService;

  beforeAll(async () => {
    const { startPlantStore } = (await import(TESTING_ENTRY)) as TestingEntry;
    store = await startPlantStore({ env: adapterUnderTest() });
    built = await startReady(store.databaseUrl, { API_TOKENS: store.token });
  }, 120_000);
  afterAll(async () => {
    await built?.service.stop();
    await store?.stop();
  });

  const bothAnswer = async (
    ask: (url: string) => Promise<Answer>,
  ): Promise<[object, object]> => [
    seen(await ask(store.url)),
    seen(await ask(built.url)),
  ];

  it.each([
    ['GET /openapi.json', '/openapi.json'],
    ['GET /docs/', '/docs/'],
    ['GET /plants (405)', '/plants'],
    ['GET a path that does not exist', '/no/such/path'],
  ])('answers %s as the built service does', async (_name, path) => {
    const [bundled, production] = await bothAnswer((url) => send(url + path));
    expect(bundled).toEqual(production);
  });

  it('answers creates, replays, conflicts and refusals as the built service does', async () => {
    const token = store.token;
    const cases: ((url: string, id: bigint) => Promise<Answer>)[] = [
      (url, id) => postPlant(url, newPlantJson(id, 'Fern', 'green'), { token }),
      (url, id) => postPlant(url, newPlantJson(id, 'Fern', 'green'), { token }),
      (url, id) => postPlant(url, newPlantJson(id, 'Palm'), { token }),
      (url, id) => postPlant(url, newPlantJson(id, 'Fern'), { token: null }),
      (url) => postPlant(url, '{"id": 1, "name":', { token }),
      (url, id) =>
        postPlant(url, newPlantJson(id, 'Fern'), {
          token,
          headers: { 'Content-Type': 'text/plain' },
        }),
    ];
    const ids = [uniqueId(), uniqueId()];
    for (const ask of cases) {
      const [bundled, production] = [
        seen(await ask(store.url, ids[0])),
        seen(await ask(built.url, ids[1])),
      ];
      expect(bundled).toEqual(production);
    }
  });

  it('serves its metrics and its health as the built service does', async () => {
    for (const path of ['/metrics', '/health']) {
      const [bundled, production] = await bothAnswer((url) => send(url + path));
      expect({ ...bundled, body: undefined }).toEqual({
        ...production,
        body: undefined,
      });
    }
  });
});
