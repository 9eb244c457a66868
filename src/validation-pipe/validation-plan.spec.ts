import type { ArgumentMetadata } from '@nestjs/common';
import { Expose, Transform } from 'class-transformer';
import { IsOptional, IsString, ValidateNested } from 'class-validator';
import fc from 'fast-check';
import { NewPlant } from '../plants/dto/new-plant.dto.js';
import { Plant } from '../plants/dto/plant.dto.js';
import { ValidationPlan } from './validation-plan.js';
import {
  createClassValidatorPipe,
  createValidationPipe,
} from './validation.pipe.js';

const classValidator = createClassValidatorPipe();
const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({
  type: 'body',
  metatype,
});

/** What Nest's ValidationPipe makes of a copy of `value`: the instance, or the refusal. */
async function byClassValidator(
  value: unknown,
): Promise<{ accepted: unknown } | { refused: unknown }> {
  const copy =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.defineProperties(
          Object.create(Object.getPrototypeOf(value) as object | null),
          Object.getOwnPropertyDescriptors(value),
        )
      : value;
  return classValidator.transform(copy, body(NewPlant)).then(
    (accepted: unknown) => ({ accepted }),
    (refused: unknown) => ({ refused }),
  );
}

const field = fc.oneof(
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
  fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n) - 1n),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', 'Fern', 'a\u0000b', '\ud800', '12'),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), {
    maxKeys: 2,
  }),
);
const key = fc.constantFrom(
  'id',
  'name',
  'tag',
  'extra',
  'constructor',
  '__proto__',
  'toString',
);
// Own properties, '__proto__' included, as a JSON parser makes them.
const record = fc
  .tuple(fc.array(fc.tuple(key, field), { maxLength: 5 }), fc.boolean())
  .map(([entries, nullPrototype]) => {
    const object: Record<string, unknown> = nullPrototype
      ? (Object.create(null) as Record<string, unknown>)
      : {};
    for (const [name, value] of entries)
      Object.defineProperty(object, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return object;
  });
const anyBody = fc.oneof(
  { arbitrary: record, weight: 8 },
  { arbitrary: field, weight: 1 },
  {
    arbitrary: fc.constantFrom(undefined, [], [{ id: 1n, name: 'x' }]),
    weight: 1,
  },
);

describe('ValidationPlan (compiled from class-validator metadata)', () => {
  const plan = ValidationPlan.compile(NewPlant)!;

  it('compiles for NewPlant and Plant, whose rules are plain checks', () => {
    expect(plan).toBeDefined();
    expect(ValidationPlan.compile(Plant)).toBeDefined();
  });

  it('agrees with Nest ValidationPipe on every body: accepts exactly what it accepts, as the same instance', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, async (value) => {
        const planned = plan.accept(value);
        const reference = await byClassValidator(value);
        if ('refused' in reference) {
          expect(planned).toBeUndefined();
        } else {
          // Every body the pipe accepts is taken by the plan: the fast path is the path.
          expect(planned).toBeInstanceOf(NewPlant);
          expect(planned).toStrictEqual(reference.accepted);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts a valid body as a NewPlant without its unknown keys', () => {
    const accepted = plan.accept({
      id: 2n ** 63n - 1n,
      name: 'Fern',
      extra: { deep: [1] },
    });
    expect(accepted).toBeInstanceOf(NewPlant);
    expect(accepted).toEqual({ id: 2n ** 63n - 1n, name: 'Fern' });
    expect(Object.hasOwn(accepted!, 'extra')).toBe(false);
  });

  it("applies class-transformer's decorators exactly as the pipe does", async () => {
    class Trimmed {
      @Transform(({ value }: { value: unknown }) =>
        typeof value === 'string' ? value.trim() : value,
      )
      @IsString()
      name!: string;
    }
    class Renamed {
      @Expose({ name: 'plant_name' })
      @IsString()
      name!: string;
    }
    for (const [metatype, value] of [
      [Trimmed, { name: '  Fern  ', extra: 1 }],
      [Renamed, { plant_name: 'Fern' }],
    ] as const) {
      const planned = ValidationPlan.compile(metatype)!.accept(value);
      expect(planned).toBeInstanceOf(metatype);
      expect(planned).toStrictEqual(
        await classValidator.transform({ ...value }, body(metatype)),
      );
    }
    expect(
      ValidationPlan.compile(Trimmed)!.accept({ name: '  Fern ' }),
    ).toEqual(Object.assign(new Trimmed(), { name: 'Fern' }));
  });

  it('is not made for rules beyond plain checks, which class-validator keeps', async () => {
    class WithOptional {
      @IsOptional()
      @IsString()
      note?: string;
    }
    class WithNested {
      @ValidateNested()
      plant!: Plant;
    }
    expect(ValidationPlan.compile(WithOptional)).toBeUndefined();
    expect(ValidationPlan.compile(WithNested)).toBeUndefined();
    const pipe = createValidationPipe();
    await expect(pipe.transform({}, body(WithOptional))).resolves.toEqual(
      new WithOptional(),
    );
    await expect(
      pipe.transform({ note: 1 }, body(WithOptional)),
    ).rejects.toMatchObject({ message: 'note must be a string.' });
  });
});

describe('createValidationPipe(dto)', () => {
  // A route declares its body as Object so that a host's global ValidationPipe skips it.
  const pipe = createValidationPipe(NewPlant);
  // A plan accepts synchronously; class-validator answers with a promise.
  const validate = async (
    value: unknown,
    declared: ArgumentMetadata['metatype'],
  ): Promise<unknown> => pipe.transform(value, body(declared));

  it('validates against the class it was given, whatever type the parameter declares', async () => {
    await expect(
      validate({ id: 12n, name: 'Fern', colour: 'green' }, Object),
    ).resolves.toEqual(
      Object.assign(new NewPlant(), { id: 12n, name: 'Fern' }),
    );
    await expect(
      validate({ id: '12', name: 'Fern' }, Object),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/^id must be an integer from /),
    });
    await expect(validate({ id: 12n }, undefined)).rejects.toMatchObject({
      message: 'name is required.',
    });
  });
});
