import {
  ValidateBy,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';

/**
 * A string PostgreSQL can store and give back unchanged: a text column cannot hold U+0000,
 * and a lone UTF-16 surrogate would be stored as U+FFFD, so neither is accepted.
 */
export function isStorableText(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.isWellFormed() &&
    !value.includes('\u0000')
  );
}

/**
 * The same rule as a JSON Schema `pattern` (ECMA-262 with the `u` flag, as ajv and the
 * JSON Schema spec read it: a surrogate range then matches lone surrogates only), so that
 * a client or a fuzzer generating text from the published document stays within it.
 */
export const STORABLE_TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';

function messageFor({ property, value }: ValidationArguments): string {
  if (value === undefined) return `${property} is required`;
  if (typeof value !== 'string') return `${property} must be a string`;
  return `${property} must be well-formed Unicode text without NUL characters`;
}

/** A required string field, `optional`: may be absent, but null is not a string. */
export function IsStorableText(
  { optional = false }: { optional?: boolean } = {},
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value: unknown) =>
          (optional && value === undefined) || isStorableText(value),
        defaultMessage: messageFor,
      },
    },
    options,
  );
}
