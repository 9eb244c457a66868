import type { Type } from '@nestjs/common';
import { TransformationType } from 'class-transformer';
// class-transformer's decorators write here; its index does not re-export it.
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import {
  getFromContainer,
  getMetadataStorage,
  ValidationTypes,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';

type ValidationMetadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']
>[number];

interface Rule {
  readonly property: string;
  readonly constraints: unknown[];
  readonly validators: readonly ValidatorConstraintInterface[];
}

type Primitive = string | number | bigint | boolean;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === Object.prototype || prototype === null;
}

function isPrimitive(value: unknown): value is Primitive {
  const type = typeof value;
  return (
    type === 'string' ||
    type === 'number' ||
    type === 'bigint' ||
    type === 'boolean'
  );
}

/**
 * Rules the plan can run exactly as class-validator would: unconditional, ungrouped,
 * synchronous checks of one property's value. Anything else (@IsOptional and @ValidateIf,
 * nested DTOs, `each`, groups, `always`, async or custom messages) leaves the class to
 * class-validator alone.
 */
function isPlainRule(metadata: ValidationMetadata): boolean {
  return (
    metadata.type === ValidationTypes.CUSTOM_VALIDATION &&
    !metadata.each &&
    metadata.validateIf === undefined &&
    metadata.always === undefined &&
    (metadata.groups ?? []).length === 0 &&
    metadata.message === undefined &&
    getMetadataStorage()
      .getTargetValidatorConstraints(metadata.constraintCls)
      .every((constraint) => !constraint.async)
  );
}

/**
 * Whether class-transformer would do more than copy the plain values: a @Type, @Transform,
 * @Expose or @Exclude on the class would make the instance differ from the plan's copy.
 */
function isShapedByClassTransformer(
  metatype: Type<object>,
  properties: readonly string[],
): boolean {
  const storage = defaultMetadataStorage;
  return (
    storage.getStrategy(metatype) !== 'none' ||
    storage.getExposedMetadatas(metatype).length > 0 ||
    storage.getExcludedMetadatas(metatype).length > 0 ||
    properties.some(
      (property) =>
        storage.findTypeMetadata(metatype, property) !== undefined ||
        storage.findTransformMetadatas(
          metatype,
          property,
          TransformationType.PLAIN_TO_CLASS,
        ).length > 0,
    )
  );
}

/**
 * The valid case of a DTO's class-validator rules, compiled once: the rules, and the
 * functions they call, are class-validator's own (read from its metadata), so they cannot
 * drift from the decorators. What the plan cannot decide alone it declines, and Nest's
 * ValidationPipe decides: a refusal (which needs class-validator's messages), a value that
 * is not a plain object of primitives, a class with rules beyond isPlainRule or shaped by
 * class-transformer's decorators.
 *
 * Why: the pipe's general path (class-transformer's copy, class-validator's metadata
 * lookup, grouping and error objects per call) was a fifth of the bytes allocated per
 * create and 9% of its CPU (bench/RESULTS.md).
 */
export class ValidationPlan<T extends object> {
  private constructor(
    private readonly metatype: Type<T>,
    private readonly properties: readonly string[],
    private readonly rules: readonly Rule[],
  ) {}

  /** A plan for `metatype`, or undefined when one of its rules is beyond a plan. */
  static compile<T extends object>(
    metatype: Type<T>,
  ): ValidationPlan<T> | undefined {
    const storage = getMetadataStorage();
    const metadatas = storage.getTargetValidationMetadatas(
      metatype,
      '',
      false,
      false,
    );
    if (metadatas.length === 0 || !metadatas.every(isPlainRule))
      return undefined;
    const rules = metadatas.map((metadata) => ({
      property: metadata.propertyName,
      constraints: metadata.constraints,
      validators: storage
        .getTargetValidatorConstraints(metadata.constraintCls)
        .map((constraint) =>
          getFromContainer<ValidatorConstraintInterface>(
            constraint.target as Type<ValidatorConstraintInterface>,
          ),
        ),
    }));
    const properties = [...new Set(rules.map((rule) => rule.property))];
    if (isShapedByClassTransformer(metatype, properties)) return undefined;
    return new ValidationPlan(metatype, properties, rules);
  }

  /**
   * The instance class-transformer and class-validator would make of `value` (declared
   * properties only: the whitelist), or undefined when the plan declines it.
   */
  accept(value: unknown): T | undefined {
    if (!isPlainObject(value)) return undefined;
    const instance = new this.metatype();
    const fields = instance as Record<string, unknown>;
    for (const property of this.properties) {
      if (!Object.hasOwn(value, property)) continue;
      const field = value[property];
      if (!isPrimitive(field)) return undefined;
      fields[property] = field;
    }
    for (const rule of this.rules) {
      const field = fields[rule.property];
      const args: ValidationArguments = {
        targetName: this.metatype.name,
        property: rule.property,
        object: instance,
        value: field,
        constraints: rule.constraints,
      };
      for (const validator of rule.validators)
        if (validator.validate(field, args) !== true) return undefined;
    }
    return instance;
  }
}
