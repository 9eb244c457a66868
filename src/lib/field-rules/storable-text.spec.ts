import fc from 'fast-check';
import { isStorableText, STORABLE_TEXT_PATTERN } from './storable-text.js';

describe('STORABLE_TEXT_PATTERN, the text rule as the OpenAPI document states it', () => {
  // JSON Schema reads a pattern as ECMA-262 with the u flag (as ajv does).
  const pattern = new RegExp(STORABLE_TEXT_PATTERN, 'u');

  it.each([
    ['', true],
    ['Monstera', true],
    ['🌱 fern', true],
    ['a\u0000b', false],
    ['\uD83C', false],
    ['x\uDF31', false],
  ])(
    '%j: matches exactly when the validation accepts (%s)',
    (text, accepted) => {
      expect(pattern.test(text)).toBe(accepted);
      expect(isStorableText(text)).toBe(accepted);
    },
  );

  it('agrees with the validation on any UTF-16 text, lone surrogates and NUL included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(pattern.test(text)).toBe(isStorableText(text));
      }),
      { numRuns: 2_000 },
    );
  });
});
