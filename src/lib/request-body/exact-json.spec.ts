import {
  InvalidJsonError,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  parseExactJson,
} from './exact-json.js';

const nested = (opener: string, closer: string, depth: number): string =>
  `${opener.repeat(depth)}1${closer.repeat(depth)}`;

describe('parseExactJson', () => {
  it('keeps integers beyond 2^53 to the last digit', () => {
    expect(parseExactJson('{"id": 9007199254740993}')).toEqual({
      id: 9007199254740993n,
    });
    expect(parseExactJson('{"id": -9223372036854775808}')).toEqual({
      id: -9223372036854775808n,
    });
  });

  it('leaves numbers with a fraction or an exponent as JS numbers', () => {
    expect(parseExactJson('[1.5, 1.0, 1e3, -0.0]')).toEqual([1.5, 1, 1000, -0]);
    expect(typeof (parseExactJson('[1.0]') as unknown[])[0]).toBe('number');
  });

  it('keeps a __proto__ key as plain data, never as a prototype', () => {
    const parsed = parseExactJson(
      '{"__proto__": {"polluted": true}}',
    ) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    '',
    '{',
    '{"id": 01}',
    '{"id": +1}',
    "{'id': 1}",
    '{"id": 1,}',
    'NaN',
    '{} {}',
  ])('refuses %j without echoing it', (text) => {
    expect(() => parseExactJson(text)).toThrow(new InvalidJsonError('syntax'));
  });

  it('refuses one key given two different values', () => {
    expect(() => parseExactJson('{"name": "a", "name": "b"}')).toThrow(
      new InvalidJsonError('duplicate-key'),
    );
  });

  it('turns a stack-deep document into a depth error, not a crash', () => {
    expect(() => parseExactJson('['.repeat(200_000))).toThrow(
      new InvalidJsonError('too-deep'),
    );
  });

  it.each([
    ['arrays', '[', ']', 1],
    ['objects', '{"a":', '}', 1],
    ['objects in arrays', '[{"b":', '}]', 2],
  ])(
    'accepts %s nested to the limit, refuses one level more and thousands more',
    (_case, opener, closer, levelsPerRepeat) => {
      // The outer object is one level; the rest fills the limit exactly.
      const repeats = (MAX_JSON_DEPTH - 1) / levelsPerRepeat;
      const document = (count: number): string =>
        `{"id":1,"extra":${nested(opener, closer, count)}}`;
      expect(() => parseExactJson(document(Math.floor(repeats)))).not.toThrow();
      for (const count of [Math.floor(repeats) + 1, 1_500, 6_000]) {
        expect(() => parseExactJson(document(count))).toThrow(
          new InvalidJsonError('too-deep'),
        );
      }
    },
  );

  it('counts no bracket inside a string, escaped quotes included', () => {
    const text = `{"a": "${'[{'.repeat(100)}\\", "b": "\\"${'['.repeat(100)}"}`;
    expect(nestsDeeperThan(text, 1)).toBe(false);
    expect(nestsDeeperThan(`["\\""${'['.repeat(2)}]]]`, 2)).toBe(true);
  });
});

describe('the depth limit, counted as brackets close', () => {
  it('takes any number of siblings at one level: a closing bracket or brace ends a level', () => {
    const siblings = (pair: string) =>
      `{"a": [${Array.from({ length: 2 * MAX_JSON_DEPTH }, () => pair).join(',')}]}`;
    expect(nestsDeeperThan(siblings('[]'), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(siblings('{}'), MAX_JSON_DEPTH)).toBe(false);
    expect(
      (parseExactJson(siblings('[1]')) as { a: unknown[] }).a,
    ).toHaveLength(2 * MAX_JSON_DEPTH);
  });

  it('says why a body is refused, quoting none of it', () => {
    expect(() => parseExactJson('{"id": 1, "id": 2}')).toThrow(
      new InvalidJsonError('duplicate-key'),
    );
    expect(new InvalidJsonError('duplicate-key').message).toBe(
      'The request body is not valid JSON: an object gives one key two different values.',
    );
    expect(new InvalidJsonError('too-deep').message).toBe(
      'The request body nests arrays and objects more than 64 levels deep.',
    );
    expect(String(new InvalidJsonError('syntax'))).toBe(
      'InvalidJsonError: The request body is not valid JSON.',
    );
  });
});
