import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';

/** One sentence naming each failing field and its rule; never the value that was sent. */
export function describeValidationErrors(errors: ValidationError[]): string {
  const rules = errors.flatMap((error) =>
    Object.values(error.constraints ?? {}).slice(0, 1),
  );
  if (rules.length === 0) return 'The request body is invalid.';
  return `${rules.join('; ')}.`;
}

/**
 * Validates @Body() DTOs. Strict: no implicit conversion, so "12" is not 12. Properties
 * the DTO does not declare are dropped (whitelist) rather than refused, as the contract
 * asks: unknown keys are ignored, never stored, never echoed.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    whitelist: true,
    forbidNonWhitelisted: false,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      ApiError.badRequest(describeValidationErrors(errors)),
  });
}
