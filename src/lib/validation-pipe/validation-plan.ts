import type { Type } from '@nestjs/common';
import { isJsonObject } from '../request-body/exact-json.js';
import { type ClassTransformOptions, plainToInstance } from 'class-transformer';
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
  if (!isJsonObject(value)) return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === Object.prototype || prototype === null;
}

/**
 * Keys Nest's ValidationPipe deletes, at every depth, before class-transformer sees a value
 * (stripProtoKeys): class-transformer would read them as the class's own (a "constructor"
 * key inside an unknown object made it throw a TypeError, a 500: issue 29).
 */
const PROTOTYPE_KEYS: readonly string[] = [
  '__proto__',
  'prototype',
  'constructor',
];

/**
 * A body the plan hands to class-transformer: a plain object of primitives and nulls, with
 * none of the prototype keys. Nothing nested: class-transformer walks into objects and
 * arrays, and the keys in there are the client's.
 */
function isFlatBody(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  for (const key of PROTOTYPE_KEYS) if (Object.hasOwn(value, key)) return false;
  for (const key of Object.keys(value)) {
    const field = value[key];
    if (field !== null && !isPrimitive(field)) return false;
  }
  return true;
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
 * The valid case of a DTO's class-validator rules, compiled once: the rules, and the
 * functions they call, are class-validator's own (read through its public
 * `getMetadataStorage()`), so they cannot drift from the decorators. The instance is
 * class-transformer's own too: `plainToInstance` with the options Nest's ValidationPipe
 * passes, so @Transform, @Type, @Expose and @Exclude apply exactly as in the pipe. What the
 * plan cannot decide alone it declines, and Nest's ValidationPipe decides: a refusal (which
 * needs class-validator's messages), a value that is not a flat plain object (isFlatBody),
 * a declared field that is not a primitive, a class with rules beyond isPlainRule.
 *
 * Why: the pipe's general path (class-validator's metadata lookup, grouping, its executor
 * and error objects per call) was the largest part of validation's cost per create
 * (bench/RESULTS.md).
 */
export class ValidationPlan<T extends object> {
  private constructor(
    private readonly metatype: Type<T>,
    private readonly transformOptions: ClassTransformOptions,
    private readonly properties: ReadonlySet<string>,
    private readonly rules: readonly Rule[],
  ) {}

  /**
   * A plan for `metatype`, or undefined when one of its rules is beyond a plan.
   * `transformOptions` are those the pipe it stands in front of gives class-transformer.
   */
  static compile<T extends object>(
    metatype: Type<T>,
    transformOptions: ClassTransformOptions = {},
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
    const properties = new Set(rules.map((rule) => rule.property));
    return new ValidationPlan(metatype, transformOptions, properties, rules);
  }

  /**
   * The instance class-transformer and class-validator would make of `value` (declared
   * properties only: the whitelist), or undefined when the plan declines it.
   */
  accept(value: unknown): T | undefined {
    // ValidationPipe's protective steps before class-transformer (stripProtoKeys, and the
    // stand-ins for primitives and binary values) are not repeated here: a body that would
    // need them is declined, and the pipe takes it, steps and all.
    if (!isFlatBody(value)) return undefined;
    const instance = plainToInstance(
      this.metatype,
      value,
      this.transformOptions,
    );
    const fields = instance as Record<string, unknown>;
    for (const key of Object.keys(fields))
      if (!this.properties.has(key)) delete fields[key];
    for (const property of this.properties)
      if (fields[property] !== undefined && !isPrimitive(fields[property]))
        return undefined;
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
