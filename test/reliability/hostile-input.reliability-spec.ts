import fc from 'fast-check';
import { FC_SEED, INT64_MAX, INT64_MIN } from '../support/fast-check.js';
import pg from 'pg';
import { printFigures } from '../support/reliability/ledger.js';
import { nextId } from '../support/reliability/load.js';
import {
  TOKEN,
  useServiceOnTestPostgres,
} from '../support/reliability/scenario.js';

// Reproduce a failure with FC_SEED=<seed printed by fast-check> npm run test:reliability.
const RUNS = Number(process.env.FC_RUNS ?? 150);

interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
}

let sent = 0;
const statuses: Record<string, number> = {};

async function post(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string>,
): Promise<Answer> {
  sent += 1;
  const response = await fetch(`${url}/plants`, {
    method: 'POST',
    headers,
    body,
  });
  statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Left as text, which the Error-body check below then refuses.
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: parsed,
  };
}

const JSON_HEADERS = {
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
};

/** The invariants for any input: never a 5xx; a failure is exactly an Error body. */
function expectWellFormed(answer: Answer): void {
  expect(answer.status).toBeLessThan(500);
  if (answer.status !== 200) {
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      error: answer.status,
      message: expect.any(String),
    });
    expect(Object.keys(answer.body as object)).toEqual(['error', 'message']);
  }
}

/** Strings a client may send and PostgreSQL can store as sent: no NUL, no lone surrogate. */
const SPECIAL_CHARACTERS = [
  '\u0001',
  '\u001f',
  '\u007f',
  '"',
  '\\',
  '\u2028',
  '\u00e9',
  '\ud83c\udf3f',
  '\ufeff',
];
const storableText = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: fc.constantFrom(...SPECIAL_CHARACTERS), maxLength: 20 }),
  )
  .filter((text) => !text.includes('\u0000') && text.isWellFormed());

// Mostly fresh ids; now and then an edge, which later runs then find taken (409).
const idLiteral = fc.oneof(
  { weight: 9, arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      INT64_MIN,
      INT64_MAX,
      INT64_MIN + 1n,
      INT64_MAX - 1n,
      0n,
      2n ** 53n + 1n,
      -(2n ** 53n) - 1n,
    ),
  },
);

describe('hostile input (fast-check, seeded)', () => {
  let db: pg.Client;

  beforeAll(() => {
    process.stdout.write(
      `[reliability] hostile input: seed ${FC_SEED}, ${RUNS} runs per property\n`,
    );
  });
  // Its hooks run after the seed is printed, and it is stopped after the checks below.
  const own = useServiceOnTestPostgres('reliability-hostile');
  beforeAll(async () => {
    db = new pg.Client({ connectionString: own.postgres.url });
    await db.connect();
  });
  afterAll(async () => {
    const { service } = own;
    printFigures({
      scenario: 'hostile input',
      sent,
      acknowledged: accepted,
      checked: accepted,
      lost: 0,
      duplicated: 0,
      indeterminate: 0,
      statuses,
    });
    await db.end();
    // Invariant: never a crash. The process is still there and still healthy.
    expect(service.process.isRunning).toBe(true);
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
  });

  let accepted = 0;
  const usedIds = new Set<string>();

  it('stores every valid NewPlant exactly, whatever its text and extra keys', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(
        idLiteral,
        storableText,
        fc.option(storableText, { nil: undefined }),
        fc.dictionary(
          fc.constantFrom(
            '__proto__',
            'constructor',
            'prototype',
            'extra',
            'ID',
            'Name',
          ),
          fc.jsonValue(),
          { maxKeys: 3 },
        ),
        async (id, name, tag, extras) => {
          const fields = [`"id": ${id}`, `"name": ${JSON.stringify(name)}`];
          if (tag !== undefined) fields.push(`"tag": ${JSON.stringify(tag)}`);
          for (const [key, value] of Object.entries(extras))
            fields.push(`${JSON.stringify(key)}: ${JSON.stringify(value)}`);
          const answer = await post(
            service.url,
            `{${fields.join(', ')}}`,
            JSON_HEADERS,
          );

          expectWellFormed(answer);
          const key = id.toString();
          if (answer.status === 409) {
            // Only an id this property used before, with other content, may conflict.
            expect(usedIds.has(key)).toBe(true);
            return;
          }
          expect(answer.status).toBe(200);
          usedIds.add(key);
          const { rows } = await db.query<{ name: string; tag: string | null }>(
            'SELECT name, tag FROM plants WHERE id = $1::bigint',
            [key],
          );
          if (rows[0].name === name && rows[0].tag === (tag ?? null)) {
            accepted += 1;
            expect(answer.body).toEqual(
              tag === undefined ? { name } : { name, tag },
            );
          } else {
            // A replay of an earlier identical plant is the only other way to get 200.
            expect(answer.body).toEqual(
              rows[0].tag === null ? { name: rows[0].name } : rows[0],
            );
          }
        },
      ),
      { seed: FC_SEED, numRuns: RUNS },
    );
  });

  it('answers any JSON value with 200, 400 or 409 and a well-formed body', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
        const answer = await post(
          service.url,
          JSON.stringify(value),
          JSON_HEADERS,
        );
        expectWellFormed(answer);
        expect([200, 400, 409, 413]).toContain(answer.status);
      }),
      { seed: FC_SEED, numRuns: RUNS },
    );
  });

  it('answers random bytes, whatever the content type, without a 5xx', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 4096 }),
        fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'text/plain',
          'application/octet-stream',
          '',
        ),
        async (bytes, contentType) => {
          const headers: Record<string, string> = {
            authorization: `Bearer ${TOKEN}`,
          };
          if (contentType !== '') headers['content-type'] = contentType;
          const answer = await post(service.url, bytes, headers);
          expectWellFormed(answer);
          expect([400, 413, 415]).toContain(answer.status);
        },
      ),
      { seed: FC_SEED, numRuns: RUNS },
    );
  });

  it('answers numbers at and past every int64 edge exactly', async () => {
    const { service } = own;
    const edges = [INT64_MIN, INT64_MAX, 0n, 2n ** 53n];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...edges),
        fc.bigInt({ min: -3n, max: 3n }),
        fc.constantFrom('', '.0', 'e0', '.5', 'E+2'),
        async (edge, delta, suffix) => {
          const value = edge + delta;
          const literal = `${value}${suffix}`;
          const answer = await post(
            service.url,
            `{"id": ${literal}, "name": "edge ${nextId()}"}`,
            JSON_HEADERS,
          );
          expectWellFormed(answer);
          const valid =
            suffix === '' && value >= INT64_MIN && value <= INT64_MAX;
          if (!valid) {
            expect(answer.status).toBe(400);
            return;
          }
          expect([200, 409]).toContain(answer.status);
        },
      ),
      { seed: FC_SEED, numRuns: RUNS },
    );
  });

  it('answers huge and deeply nested documents with 400 or 413, never a crash', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 200_000 }),
        fc.constantFrom('[', '{"a":', '[{"b":'),
        async (depth, opener) => {
          const answer = await post(
            service.url,
            opener.repeat(depth),
            JSON_HEADERS,
          );
          expectWellFormed(answer);
          expect([400, 413]).toContain(answer.status);
        },
      ),
      { seed: FC_SEED, numRuns: Math.min(RUNS, 60) },
    );
  });

  it('answers complete NewPlants nested 65 to 8,000 levels deep under any key with 400 or 413', async () => {
    const { service } = own;
    const nesting = {
      arrays: ['[', ']'],
      objects: ['{"a":', '}'],
      'objects in arrays': ['[{"b":', '}]'],
    } as const;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 65, max: 8_000 }),
        fc.constantFrom(...(Object.keys(nesting) as (keyof typeof nesting)[])),
        fc.constantFrom('extra', '__proto__', 'constructor', 'name', 'tag'),
        async (depth, kind, key) => {
          const [opener, closer] = nesting[kind];
          const id = nextId();
          const deep = `${opener.repeat(depth)}1${closer.repeat(depth)}`;
          const known = key === 'name' ? '' : '"name": "deep", ';
          const answer = await post(
            service.url,
            `{"id": ${id}, ${known}"${key}": ${deep}}`,
            JSON_HEADERS,
          );
          expectWellFormed(answer);
          expect([400, 413]).toContain(answer.status);
          const { rows } = await db.query(
            'SELECT 1 FROM plants WHERE id = $1::bigint',
            [id.toString()],
          );
          expect(rows).toEqual([]);
        },
      ),
      { seed: FC_SEED, numRuns: Math.min(RUNS, 60) },
    );
  });

  it('answers duplicate keys with different values with 400', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('id', 'name', 'tag'),
        storableText,
        storableText,
        async (key, first, second) => {
          fc.pre(first !== second);
          const id = nextId();
          const body = `{"id": ${id}, "name": "n", "tag": "t", ${JSON.stringify(key)}: ${JSON.stringify(first)}, ${JSON.stringify(key)}: ${JSON.stringify(second)}}`;
          const answer = await post(service.url, body, JSON_HEADERS);
          expectWellFormed(answer);
          expect(answer.status).toBe(400);
        },
      ),
      { seed: FC_SEED, numRuns: Math.min(RUNS, 60) },
    );
  });

  it('answers wrong and missing headers with 401, 413 or 415, never a 5xx', async () => {
    const { service } = own;
    await fc.assert(
      fc.asyncProperty(
        fc.option(
          fc.oneof(
            fc.constant(`Bearer ${TOKEN}`),
            fc.string({ maxLength: 60 }).map((text) => `Bearer ${text}`),
            fc.string({ maxLength: 60 }),
          ),
          { nil: undefined },
        ),
        fc.option(
          fc.oneof(
            fc.constantFrom(
              'application/json',
              'text/html',
              'multipart/form-data; boundary=x',
            ),
            fc.string({ maxLength: 40 }),
          ),
          { nil: undefined },
        ),
        async (authorization, contentType) => {
          const headers: Record<string, string> = {};
          // fetch refuses header values it cannot send; those are not inputs the server can see.
          const printable = (text: string) =>
            /^[\x20-\x7e]*$/.test(text) && text.trim() === text;
          if (authorization !== undefined && printable(authorization))
            headers.authorization = authorization;
          if (contentType !== undefined && printable(contentType))
            headers['content-type'] = contentType;
          const answer = await post(
            service.url,
            `{"id": ${nextId()}, "name": "headers"}`,
            headers,
          );
          expectWellFormed(answer);
          expect([200, 400, 401, 415, 429]).toContain(answer.status);
        },
      ),
      { seed: FC_SEED, numRuns: RUNS },
    );
  });
});
