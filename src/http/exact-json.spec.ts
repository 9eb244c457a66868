import { InvalidJsonError, parseExactJson } from './exact-json.js';

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

  it('turns a stack-deep document into a syntax error, not a crash', () => {
    expect(() => parseExactJson('['.repeat(200_000))).toThrow(InvalidJsonError);
  });
});
