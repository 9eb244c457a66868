import { parse } from 'lossless-json';

const INTEGER_LITERAL = /^-?(?:0|[1-9]\d*)$/;

/** Deepest nesting a body may have: later steps recurse, and a few thousand levels overflow the stack. */
export const MAX_JSON_DEPTH = 64;

type InvalidJsonReason = 'syntax' | 'duplicate-key' | 'too-deep';

const MESSAGES: Readonly<Record<InvalidJsonReason, string>> = {
  syntax: 'The request body is not valid JSON.',
  'duplicate-key':
    'The request body is not valid JSON: an object gives one key two different values.',
  'too-deep': `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
};

/** Thrown for any text that is not one JSON document; carries no part of the input. */
export class InvalidJsonError extends Error {
  override readonly name = 'InvalidJsonError';
  constructor(readonly reason: InvalidJsonReason) {
    super(MESSAGES[reason]);
  }
}

/** Integer literals become exact bigints (JSON.parse rounds past 2^53); fractions stay numbers. */
function parseNumber(text: string): bigint | number {
  return INTEGER_LITERAL.test(text) ? BigInt(text) : Number(text);
}

function rejectDuplicateKey(): never {
  throw new InvalidJsonError('duplicate-key');
}

const CHAR = {
  quote: 0x22,
  backslash: 0x5c,
  openBracket: 0x5b,
  closeBracket: 0x5d,
  openBrace: 0x7b,
  closeBrace: 0x7d,
} as const;

/** Whether brackets and braces outside strings nest deeper than `limit`: one loop, no recursion. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === CHAR.backslash) index += 1;
      else if (code === CHAR.quote) inString = false;
    } else if (code === CHAR.quote) {
      inString = true;
    } else if (code === CHAR.openBracket || code === CHAR.openBrace) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === CHAR.closeBracket || code === CHAR.closeBrace) {
      depth -= 1;
    }
  }
  return false;
}

export function parseExactJson(text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new InvalidJsonError('too-deep');
  }
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

/** A JSON object, as a parser makes one: not null, not an array. The contract's bodies all are. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
