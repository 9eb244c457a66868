import {
  type ArgumentMetadata,
  type PipeTransform,
  type Type,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import type { ClassTransformOptions } from 'class-transformer';
import { ApiError } from '../errors/api-error.js';
import { ValidationPlan } from './validation-plan.js';

/** class-transformer's options, the plan's and the pipe's: "12" is not made 12. */
const TRANSFORM_OPTIONS: ClassTransformOptions = {
  enableImplicitConversion: false,
};

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
 *
 * A body its DTO's compiled plan accepts is done there; everything else, every refusal
 * included, goes through Nest's ValidationPipe, which decides and words the answer.
 */
export class DtoValidationPipe implements PipeTransform {
  private readonly plans = new Map<
    Type<object>,
    ValidationPlan<object> | undefined
  >();

  constructor(private readonly validationPipe: ValidationPipe) {}

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const accepted =
      metadata.type === 'body' && metadata.metatype !== undefined
        ? this.planFor(metadata.metatype as Type<object>)?.accept(value)
        : undefined;
    return accepted ?? this.validationPipe.transform(value, metadata);
  }

  private planFor(metatype: Type<object>): ValidationPlan<object> | undefined {
    if (!this.plans.has(metatype))
      this.plans.set(
        metatype,
        ValidationPlan.compile(metatype, TRANSFORM_OPTIONS),
      );
    return this.plans.get(metatype);
  }
}

/** Nest's ValidationPipe as the service configures it: what a plan must agree with. */
export function createClassValidatorPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    transformOptions: TRANSFORM_OPTIONS,
    whitelist: true,
    forbidNonWhitelisted: false,
    forbidUnknownValues: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      ApiError.badRequest(describeValidationErrors(errors)),
  });
}

export function createValidationPipe(): DtoValidationPipe {
  return new DtoValidationPipe(createClassValidatorPipe());
}
