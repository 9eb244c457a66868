import {
  ValidateBy,
  ValidationArguments,
  ValidationOptions,
} from 'class-validator';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** An int64 as the exact JSON parser hands it over, a bigint: nothing is coerced, not even "12" or 1e3. */
export function isInt64(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

/** What a refused int64 field is told: the rule, never the value sent. */
export function int64Rule(property: string): string {
  return `${property} must be an integer from ${INT64_MIN} to ${INT64_MAX}, written without a fraction or an exponent`;
}

export function IsInt64(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInt64',
      validator: {
        validate: (value: unknown) => isInt64(value),
        defaultMessage: ({ property, value }: ValidationArguments) =>
          value === undefined ? `${property} is required` : int64Rule(property),
      },
    },
    options,
  );
}
