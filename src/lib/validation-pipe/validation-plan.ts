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

/** Keys ValidationPipe strips at every depth before class-transformer (issue 29: a 500). */
const PROTOTYPE_KEYS: readonly string[] = [
  '__proto__',
  'prototype',
  'constructor',
];

/** A plain object of primitives and nulls without prototype keys: nothing nested is handed on. */
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

/** Unconditional, ungrouped, synchronous checks of one value, run exactly as class-validator would. */
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
 * The valid case of a DTO's class-validator rules, compiled once from their metadata; anything else,
 * every refusal included, is Nest's ValidationPipe's (docs/performance.md#what-bought-the-most-and-where-it-is-measured).
 */
export class ValidationPlan<T extends object> {
  private constructor(
    private readonly metatype: Type<T>,
    private readonly transformOptions: ClassTransformOptions,
    private readonly properties: ReadonlySet<string>,
    private readonly rules: readonly Rule[],
  ) {}

  /** A plan for `metatype` with the pipe's `transformOptions`, or undefined when a rule is beyond one. */
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

  /** The whitelisted instance class-validator would accept, or undefined when declined. */
  accept(value: unknown): T | undefined {
    // A body needing ValidationPipe's protective steps is declined, and the pipe takes it.
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
