import { type ArgumentMetadata, HttpException } from '@nestjs/common';
import { Expose, Transform } from 'class-transformer';
import {
  IsOptional,
  IsString,
  MinLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
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

/** What a pipe made of a value, whether it answered at once, with a promise, or threw. */
async function settle(
  transform: () => unknown,
): Promise<{ accepted: unknown } | { refused: unknown }> {
  try {
    return { accepted: await transform() };
  } catch (refused) {
    return { refused };
  }
}

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
  return settle(() => classValidator.transform(copy, body(NewPlant)));
}

/** A refusal the filter answers 400: anything else thrown would be a 500. */
function expectBadRequest(refused: unknown): void {
  expect(refused).toBeInstanceOf(HttpException);
  expect((refused as HttpException).getStatus()).toBe(400);
}

/** The shape the plan takes itself: a plain object of primitives, no prototype key. */
function isFlat(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return false;
  return (
    Object.entries(value).every(
      ([name, field]) =>
        !['__proto__', 'prototype', 'constructor'].includes(name) &&
        (field === null || typeof field !== 'object'),
    ) && !Object.hasOwn(value, '__proto__')
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
// Keys a hostile client sends: the DTO's, near misses, and the names object walkers trip on.
const key = fc.constantFrom(
  'id',
  'name',
  'tag',
  'extra',
  'constructor',
  '__proto__',
  'prototype',
  'toString',
  '',
  'ID',
  'id ',
);
/** A value a JSON parser makes: nested objects (own keys, '__proto__' included) and arrays. */
function ownRecord(
  entries: readonly (readonly [string, unknown])[],
  nullPrototype: boolean,
): Record<string, unknown> {
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
}
const { nested } = fc.letrec<{ nested: unknown }>((tie) => ({
  nested: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    field,
    fc.constantFrom(-0, 1e308, '\u0000', '\udc00', [], {}),
    fc.array(tie('nested'), { maxLength: 3 }),
    fc
      .tuple(
        fc.array(fc.tuple(key, tie('nested')), { maxLength: 3 }),
        fc.boolean(),
      )
      .map(([entries, nullPrototype]) => ownRecord(entries, nullPrototype)),
  ),
}));
// Own properties, '__proto__' included, as a JSON parser makes them; now and then nested.
const record = fc
  .tuple(
    fc.array(fc.tuple(key, fc.oneof({ arbitrary: field, weight: 4 }, nested)), {
      maxLength: 5,
    }),
    fc.boolean(),
  )
  .map(([entries, nullPrototype]) => ownRecord(entries, nullPrototype));
// Bodies the pipe accepts, or nearly: a valid id and name, now and then a tag, with unknown
// keys of any field beside them, on either prototype. Random records are rarely valid, and the
// fast path is for the valid ones.
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const nearlyValid = fc
  .tuple(
    int64,
    fc.string({ maxLength: 8 }),
    fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    fc.array(fc.tuple(key, field), { maxLength: 3 }),
    fc.boolean(),
  )
  .map(([id, name, tag, extra, nullPrototype]) =>
    ownRecord(
      [
        ['id', id],
        ['name', name],
        ...(tag === undefined ? [] : [['tag', tag] as const]),
        ...extra,
      ],
      nullPrototype,
    ),
  );
const anyBody = fc.oneof(
  { arbitrary: record, weight: 8 },
  { arbitrary: field, weight: 1 },
  { arbitrary: nested, weight: 1 },
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

  it('agrees with Nest ValidationPipe on every object body: accepts exactly what it accepts, as the same instance; neither throws but a 400', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(record, nearlyValid), async (value) => {
        const flat = isFlat(value);
        // The plan must not throw on any body: a TypeError here was a 500 (issue 29).
        const planned = plan.accept(value);
        const reference = await byClassValidator(value);
        if ('refused' in reference) {
          expectBadRequest(reference.refused);
          expect(planned).toBeUndefined();
        } else if (flat) {
          // Every flat body the pipe accepts is taken by the plan: the fast path is the path.
          expect(planned).toBeInstanceOf(NewPlant);
          expect(planned).toStrictEqual(reference.accepted);
        } else {
          // Anything nested, or with a prototype key, is the pipe's alone (its stripProtoKeys).
          expect(planned).toBeUndefined();
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("the route's pipe answers any body with a NewPlant or a 400, never another error", async () => {
    const pipe = createValidationPipe(NewPlant);
    await fc.assert(
      fc.asyncProperty(anyBody, async (value) => {
        expect(() => plan.accept(value)).not.toThrow();
        const outcome = await settle(() => pipe.transform(value, body(Object)));
        if ('refused' in outcome) expectBadRequest(outcome.refused);
        else expect(outcome.accepted).toBeInstanceOf(NewPlant);
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts a valid flat body as a NewPlant without its unknown keys', () => {
    const accepted = plan.accept({
      id: 2n ** 63n - 1n,
      name: 'Fern',
      extra: 'leaf',
    });
    expect(accepted).toBeInstanceOf(NewPlant);
    expect(accepted).toEqual({ id: 2n ** 63n - 1n, name: 'Fern' });
    expect(Object.hasOwn(accepted!, 'extra')).toBe(false);
  });

  // The steps of ValidationPipe that protect, each kept by declining what needs it.
  it.each([
    ['stripProtoKeys, inside an unknown object', { x: { constructor: [] } }],
    ['stripProtoKeys, inside an unknown array', { x: [{ constructor: {} }] }],
    ['stripProtoKeys, at the top', { constructor: {} }],
    ['stripProtoKeys, a primitive at the top', { prototype: 1 }],
    ['stripProtoKeys, an own __proto__', JSON.parse('{"__proto__": 1}')],
  ])(
    'declines, for the pipe to take, a body that needs %s',
    async (_step, extra: object) => {
      const value = { id: 5n, name: 'a', ...extra };
      expect(() => plan.accept(value)).not.toThrow();
      expect(plan.accept(value)).toBeUndefined();
      // The pipe takes it: the prototype keys stripped, the unknown keys dropped.
      await expect(
        createValidationPipe(NewPlant).transform(value, body(Object)),
      ).resolves.toEqual(Object.assign(new NewPlant(), { id: 5n, name: 'a' }));
    },
  );

  it("declines a non-object body, which the route's pipe refuses as the body reader words it", async () => {
    for (const value of [undefined, null, 'text', 12n, [], [{ id: 1n }]]) {
      expect(plan.accept(value)).toBeUndefined();
      const outcome = await settle(() =>
        createValidationPipe(NewPlant).transform(value, body(Object)),
      );
      expect(outcome).toEqual({
        refused: expect.objectContaining({
          message: 'The request body must be a JSON object.',
        }),
      });
      expectBadRequest((outcome as { refused: unknown }).refused);
    }
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
    // Conditional, grouped, always, worded or asynchronous: class-validator runs these with
    // options the plan does not carry out, so it is not made for them.
    @ValidatorConstraint({ async: true })
    class LaterTrue implements ValidatorConstraintInterface {
      validate = () => Promise.resolve(true);
    }
    class Conditional {
      @IsString({ validateIf: () => true })
      name!: string;
    }
    class Grouped {
      @IsString({ groups: ['strict'] })
      name!: string;
    }
    class Always {
      @IsString({ always: true })
      name!: string;
    }
    class Worded {
      @IsString({ message: 'a name, please' })
      name!: string;
    }
    class Later {
      @Validate(LaterTrue)
      name!: string;
    }
    for (const metatype of [Conditional, Grouped, Always, Worded, Later])
      expect(ValidationPlan.compile(metatype)).toBeUndefined();
    const pipe = createValidationPipe();
    await expect(pipe.transform({}, body(WithOptional))).resolves.toEqual(
      new WithOptional(),
    );
    await expect(
      pipe.transform({ note: 1 }, body(WithOptional)),
    ).rejects.toMatchObject({ message: 'note must be a string.' });
  });
});

describe('the plan and the pipe on what a host may hand them', () => {
  const pipe = createValidationPipe();

  it('refuses what a grouped rule refuses: the pipe validates without groups, so every rule holds', async () => {
    class Named {
      @IsString()
      @MinLength(3, { groups: ['strict'] })
      name!: string;
    }
    await expect(
      pipe.transform({ name: 'ab' }, body(Named)),
    ).rejects.toMatchObject({
      message: 'name must be longer than or equal to 3 characters.',
    });
  });

  it('takes a flat body without a prototype, as a JSON parser may make it', () => {
    const plan = ValidationPlan.compile(NewPlant)!;
    const value = Object.assign(Object.create(null) as object, {
      id: 3n,
      name: 'Fern',
    });
    expect(plan.accept(value)).toEqual(
      Object.assign(new NewPlant(), { id: 3n, name: 'Fern' }),
    );
  });

  it("declines an object of a host's class, which only Nest's pipe takes", async () => {
    class Parsed {
      constructor(
        readonly id: bigint,
        readonly name: string,
      ) {}
    }
    const value = new Parsed(4n, 'Fern');
    expect(ValidationPlan.compile(NewPlant)!.accept(value)).toBeUndefined();
    await expect(pipe.transform(value, body(NewPlant))).resolves.toEqual(
      Object.assign(new NewPlant(), { id: 4n, name: 'Fern' }),
    );
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
