import {
  type ArgumentMetadata,
  type PipeTransform,
  type Type,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import type { ClassTransformOptions } from 'class-transformer';
import { isJsonObject } from '../request-body/exact-json.js';
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

/** The declared types Nest's ValidationPipe passes through unvalidated (its toValidate). */
const UNVALIDATED_TYPES: ReadonlySet<Type<unknown>> = new Set<Type<unknown>>([
  String,
  Boolean,
  Number,
  Array,
  Object,
]);

/**
 * @Body() DTOs strictly (no implicit conversion), undeclared properties dropped: the plan first,
 * Nest's ValidationPipe for the rest. Given a class, it validates against it (see NewPlantBody).
 */
export class DtoValidationPipe implements PipeTransform {
  private readonly plans = new Map<
    Type<object>,
    ValidationPlan<object> | undefined
  >();

  constructor(
    private readonly validationPipe: ValidationPipe,
    private readonly dto?: Type<object>,
  ) {}

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const metatype = (this.dto ?? metadata.metatype) as
      Type<object> | undefined;
    const validatesBody =
      metadata.type === 'body' &&
      metatype !== undefined &&
      !UNVALIDATED_TYPES.has(metatype);
    // Nest's ValidationPipe throws a TypeError (a 500) on a bigint body (`12`): refused first.
    if (validatesBody && !isJsonObject(value)) throw ApiError.notAJsonObject();
    const accepted = validatesBody
      ? this.planFor(metatype)?.accept(value)
      : undefined;
    return (
      accepted ??
      this.validationPipe.transform(
        value,
        this.dto === undefined ? metadata : { ...metadata, metatype },
      )
    );
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

/** `dto`: the class to validate against, in place of the parameter's declared type. */
export function createValidationPipe(dto?: Type<object>): DtoValidationPipe {
  return new DtoValidationPipe(createClassValidatorPipe(), dto);
}
