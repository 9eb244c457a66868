import {
  ValidateBy,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';

/** Text PostgreSQL gives back unchanged: no U+0000 (refused), no lone surrogate (stored as U+FFFD). */
export function isStorableText(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.isWellFormed() &&
    !value.includes('\u0000')
  );
}

/** The same rule as a JSON Schema `pattern` (the `u` flag: a surrogate range matches lone ones only). */
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
