import { type RunningApp, startApp } from './support/app.js';
import { expectErrorAnswer } from './support/http.js';
import { postPlant, uniqueId } from './support/plants.js';
import { countPlants } from './support/stored-plants.js';

const TOO_DEEP =
  'The request body nests arrays and objects more than 64 levels deep.';

/** `depth` levels of arrays or objects around a number. */
function nested(kind: 'arrays' | 'objects', depth: number): string {
  return kind === 'arrays'
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('JSON nesting depth', () => {
  let service: RunningApp;

  beforeAll(async () => {
    // Room for 6,000 levels of objects too; the default limit fits 6,000 of arrays.
    service = await startApp({ BODY_LIMIT: '64kb' });
  });
  afterAll(() => service.close());

  describe.each(['arrays', 'objects'] as const)('%s', (kind) => {
    it.each([
      ['an unknown key', 'extra'],
      ['__proto__', '__proto__'],
      ['constructor', 'constructor'],
      ['name', 'name'],
      ['tag', 'tag'],
    ])(
      'answers 400, never a 5xx, for 1,500 to 6,000+ levels under %s',
      async (_case, key) => {
        for (const depth of [1_500, 3_000, 6_000, 6_500]) {
          const id = uniqueId();
          const fields = {
            id: `${id}`,
            name: '"Fern"',
            [key]: nested(kind, depth),
          };
          const json = `{${Object.entries(fields)
            .map(([name, value]) => `"${name}":${value}`)
            .join(',')}}`;
          expect(json.length).toBeLessThan(64 * 1024);

          const answer = await postPlant(service.url, json);

          expectErrorAnswer(answer, 400, TOO_DEEP);
          expect(await countPlants(service.dataSource, id)).toBe(0);
        }
      },
    );

    it('answers 400 for a document that is only nesting', async () => {
      const answer = await postPlant(service.url, nested(kind, 6_000));
      expectErrorAnswer(answer, 400, TOO_DEEP);
    });

    it('accepts an unknown key nested up to the limit and drops it', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service.url,
        `{"id":${id},"name":"Fern","extra":${nested(kind, 63)}}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
      expect(await countPlants(service.dataSource, id)).toBe(1);
    });
  });

  it('answers a deep document under the default 16 KiB limit with 400', async () => {
    const small = await startApp();
    try {
      const json = `{"id":${uniqueId()},"name":"x","extra":${nested('arrays', 6_000)}}`;
      expect(json.length).toBeLessThan(16 * 1024);
      const answer = await postPlant(small.url, json);
      expectErrorAnswer(answer, 400, TOO_DEEP);
    } finally {
      await small.close();
    }
  });
});
