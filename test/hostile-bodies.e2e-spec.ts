import fc from 'fast-check';
import { FC_SEED, INT64_MAX, INT64_MIN } from './support/fast-check.js';
import { inject } from 'vitest';
import { errorBody, send } from './support/http.js';
import { TOKEN } from './support/tokens.js';
import {
  type RunningService,
  startService,
} from './support/reliability/scenario.js';

// Issue 29: a "constructor" key inside an unknown property was a 500. Seeded and
// reproducible: FC_SEED=<the seed printed below> npm run test:e2e -- test/hostile-bodies.

/** Keys object walkers trip on, the DTO's own, and near misses of them. */
const awkwardKey = fc.constantFrom(
  'constructor',
  'prototype',
  '__proto__',
  'toString',
  'hasOwnProperty',
  '',
  'ID',
  'id ',
  'id',
  'name',
  'tag',
  'x',
);

/** JSON text of values a parser and the rules behind it must survive. */
const awkwardValue = fc.oneof(
  fc.constantFrom(
    '1e999',
    '-1e999',
    '-0',
    '0.0',
    '"\\u0000"',
    '"\\ud800"',
    '"\\udc00x"',
    `${INT64_MAX}`,
    `${INT64_MIN}`,
    `${INT64_MAX + 1n}`,
    `${INT64_MIN - 1n}`,
    '9007199254740993',
    '[]',
    '{}',
    'null',
    'true',
    '""',
    '"Fern"',
  ),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map(String),
  fc
    .string({ unit: 'binary', maxLength: 12 })
    .map((text) => JSON.stringify(text)),
);

/** JSON text nested a few levels, with awkward keys at every level. */
const { json } = fc.letrec<{ json: string }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    awkwardValue,
    fc
      .array(tie('json'), { maxLength: 3 })
      .map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(awkwardKey, tie('json')), { maxLength: 4 })
      .map(objectText),
  ),
}));

function objectText(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

let counter = 0n;
/** An id of this run alone, so that a valid body is 200 and not a replay's 409. */
function freshId(): bigint {
  counter += 1n;
  return 2n ** 61n + BigInt(FC_SEED) * 2n ** 20n + counter;
}

/** A valid NewPlant around awkward extra keys and values: 200 unless an extra overrides a field. */
const plantWithExtras = fc
  .array(fc.tuple(awkwardKey, json), { maxLength: 4 })
  .map((extras) =>
    objectText([['id', `${freshId()}`], ['name', '"Fern"'], ...extras]),
  );

/** Whatever the generators make, cut short at any point: never valid JSON but by luck. */
const truncated = fc
  .tuple(plantWithExtras, fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([text, at]) => text.slice(0, Math.floor(text.length * at)));

/** Past the 16kb body limit: 413, never read whole. */
const oversized = fc
  .tuple(plantWithExtras, fc.integer({ min: 17_000, max: 40_000 }))
  .map(([text, size]) => `${text.slice(0, -1)},"pad":"${'x'.repeat(size)}"}`);

/** Past the parser's depth limit, under an awkward key. */
const deeplyNested = fc
  .tuple(awkwardKey, fc.integer({ min: 60, max: 5_000 }), fc.boolean())
  .map(
    ([key, depth, arrays]) =>
      `{"id":${freshId()},"name":"Fern",${JSON.stringify(key)}:${
        arrays
          ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
          : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
      }}`,
  );

const anyBody = fc.oneof(
  { arbitrary: plantWithExtras, weight: 6 },
  { arbitrary: json, weight: 2 },
  { arbitrary: truncated, weight: 2 },
  { arbitrary: oversized, weight: 1 },
  { arbitrary: deeplyNested, weight: 1 },
);

/** Pino's error and fatal levels. */
const ERROR_LEVEL = 50;

function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    try {
      return (
        ((JSON.parse(line) as { level?: number }).level ?? 0) >= ERROR_LEVEL
      );
    } catch {
      return false;
    }
  });
}

describe('hostile JSON bodies (fast-check, seeded), sent to the built service on PostgreSQL', () => {
  let service: RunningService;
  beforeAll(async () => {
    process.stdout.write(`[e2e] hostile bodies: seed ${FC_SEED}\n`);
    service = await startService(inject('databaseUrl'));
  });
  afterAll(() => service?.process.stop());

  const post = (body: string) =>
    send(`${service.url}/plants`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        'Content-Type': 'application/json',
      },
      body,
    });

  it.each([
    '{"id":%ID%,"name":"a","x":{"constructor":[]}}',
    '{"id":%ID%,"name":"a","x":{"constructor":{}}}',
    '{"id":%ID%,"name":"a","constructor":{}}',
    '{"id":%ID%,"name":"a","x":[{"prototype":{"__proto__":{}}}]}',
  ])(
    'creates a valid plant whatever its unknown keys hold: %s',
    async (template) => {
      const answer = await post(template.replace('%ID%', `${freshId()}`));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'a' });
    },
  );

  it('answers every body with 200, 400, 409 or 413, each failure an Error body, and logs no error', async () => {
    const seen: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        // A dropped connection rejects here, and fails the property.
        const answer = await post(body);
        seen[answer.status] = (seen[answer.status] ?? 0) + 1;
        expect([200, 400, 409, 413]).toContain(answer.status);
        if (answer.status !== 200)
          expect(answer.body).toEqual(errorBody(answer.status));
      }),
      { seed: FC_SEED, numRuns: 400 },
    );
    process.stdout.write(`[e2e] hostile bodies: ${JSON.stringify(seen)}\n`);
    // Both sides were reached: plants created, and bodies refused.
    expect(seen[200]).toBeGreaterThan(0);
    expect(seen[400]).toBeGreaterThan(0);
    expect(service.process.isRunning).toBe(true);
    expect(errorLines(service.process.text)).toEqual([]);
  });
});
