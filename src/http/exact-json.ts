import { parse } from 'lossless-json';

const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;

/** Thrown for any text that is not one JSON document; carries no part of the input. */
export class InvalidJsonError extends Error {
  override readonly name = 'InvalidJsonError';
  constructor(readonly reason: 'syntax' | 'duplicate-key') {
    super(
      reason === 'duplicate-key'
        ? 'The request body is not valid JSON: an object gives one key two different values.'
        : 'The request body is not valid JSON.',
    );
  }
}

/**
 * JSON.parse rounds integers beyond 2^53, so an int64 id would be stored wrong. Here every
 * integer literal becomes a bigint, kept to the last digit; a number written with a
 * fraction or an exponent stays a JS number, so that rules can tell the two apart.
 */
function parseNumber(text: string): bigint | number {
  return INTEGER_LITERAL.test(text) ? BigInt(text) : Number(text);
}

function rejectDuplicateKey(): never {
  throw new InvalidJsonError('duplicate-key');
}

export function parseExactJson(text: string): unknown {
  try {
    return parse(text, null, {
      parseNumber,
      onDuplicateKey: rejectDuplicateKey,
    });
  } catch (error) {
    if (error instanceof InvalidJsonError) throw error;
    throw new InvalidJsonError('syntax');
  }
}
