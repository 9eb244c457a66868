import type { ArgumentMetadata, ValidationError } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { NewPlant } from '../plants/dto/new-plant.dto.js';
import { ValidationPlan } from './validation-plan.js';
import {
  createValidationPipe,
  describeValidationErrors,
} from './validation.pipe.js';

const asBody = (metatype?: ArgumentMetadata['metatype']): ArgumentMetadata => ({
  type: 'body',
  metatype,
});

/** What a client is answered: the value the handler gets, or the 400 and its sentence. */
async function outcome(transform: () => unknown) {
  try {
    return { accepted: (await transform()) as unknown };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.getStatus(), message: error.message };
  }
}

describe('the validation pipe', () => {
  const pipe = createValidationPipe();

  it.each([
    ['a flat body (the compiled plan)', { id: 7n, name: 'Fern', other: 1 }],
    [
      "a body with a nested unknown key (Nest's ValidationPipe)",
      { id: 7n, name: 'Fern', other: { deep: [1] } },
    ],
  ])('makes %s a NewPlant without its unknown keys', async (_path, value) => {
    const { accepted } = await outcome(() =>
      pipe.transform({ ...value }, asBody(NewPlant)),
    );
    expect(accepted).toBeInstanceOf(NewPlant);
    expect({ ...(accepted as object) }).toEqual({ id: 7n, name: 'Fern' });
  });

  it.each([
    ['a flat body', { id: 7n }],
    ['a nested body', { id: 7n, other: { deep: 1 } }],
  ])(
    'refuses %s missing its name with 400 and one sentence naming the rule',
    async (_path, value) => {
      const refused = await outcome(() =>
        pipe.transform(value, asBody(NewPlant)),
      );
      expect(refused).toMatchObject({ status: 400 });
      expect((refused as { message: string }).message).toMatch(/^name .*\.$/);
    },
  );

  it.each([
    ['a bigint', 12n],
    ['an array', [{ id: 1n, name: 'Fern' }]],
    ['null', null],
    ['a string', 'Fern'],
  ])(
    'refuses %s with the 400 of a body that is not an object',
    async (_kind, value) => {
      expect(
        await outcome(() => pipe.transform(value, asBody(NewPlant))),
      ).toEqual({
        status: 400,
        message: 'The request body must be a JSON object.',
      });
    },
  );

  it.each([
    ['a body declared as Object', asBody(Object)],
    ['a body declared as String', asBody(String)],
    ['a body with no declared type', asBody(undefined)],
  ] as [string, ArgumentMetadata][])(
    'passes %s through as it is',
    async (_kind, metadata) => {
      const value = { anything: 'goes' };
      expect(await outcome(() => pipe.transform(value, metadata))).toEqual({
        accepted: value,
      });
      expect(await outcome(() => pipe.transform(12n, metadata))).toEqual({
        accepted: 12n,
      });
    },
  );

  it('given a DTO, validates against it whatever type the parameter declares', async () => {
    const route = createValidationPipe(NewPlant);
    for (const declared of [Object, undefined]) {
      const { accepted } = await outcome(() =>
        route.transform({ id: 1n, name: 'Fern', x: 1 }, asBody(declared)),
      );
      expect(accepted).toBeInstanceOf(NewPlant);
      expect(
        await outcome(() => route.transform({ id: 1n }, asBody(declared))),
      ).toMatchObject({ status: 400 });
      expect(
        await outcome(() => route.transform([1], asBody(declared))),
      ).toEqual({
        status: 400,
        message: 'The request body must be a JSON object.',
      });
    }
  });
});

describe('the validation pipe, its plans', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("compiles a DTO's plan once, at its first body, and answers a valid body from it at once", () => {
    const compile = vi.spyOn(ValidationPlan, 'compile');
    const pipe = createValidationPipe();
    for (const id of [1n, 2n, 3n]) {
      // No promise: the plan answers in the same turn, where class-validator would not.
      const accepted = pipe.transform({ id, name: 'Fern' }, asBody(NewPlant));
      expect(accepted).toBeInstanceOf(NewPlant);
      expect(accepted).toEqual(
        Object.assign(new NewPlant(), { id, name: 'Fern' }),
      );
    }
    expect(compile.mock.calls.map(([metatype]) => metatype)).toEqual([
      NewPlant,
    ]);
  });

  it("leaves a custom decorator's value alone, as Nest's ValidationPipe does", async () => {
    const pipe = createValidationPipe();
    const custom = { type: 'custom', metatype: NewPlant } as const;
    for (const value of [{ id: 5n, name: 'Fern', extra: 1 }, 'text']) {
      const answer = pipe.transform(value, custom);
      await expect(Promise.resolve(answer)).resolves.toBe(value);
    }
  });
});

describe('describeValidationErrors', () => {
  const error = (
    property: string,
    constraints?: Record<string, string>,
  ): ValidationError => ({ property, constraints, children: [] });

  it('names the first rule each failing field broke, in one sentence', () => {
    expect(
      describeValidationErrors([
        error('id', { isInt: 'id must be an integer', min: 'id too small' }),
        error('name', { isString: 'name must be a string' }),
      ]),
    ).toBe('id must be an integer; name must be a string.');
  });

  it('says the body is invalid when no rule is named', () => {
    expect(describeValidationErrors([])).toBe('The request body is invalid.');
    expect(describeValidationErrors([error('id')])).toBe(
      'The request body is invalid.',
    );
  });
});

describe('the validation pipe, on a DTO without rules', () => {
  /** A class with no class-validator rule: nothing could say what a valid body is. */
  class Unchecked {
    note?: string;
  }

  it('refuses every body with 400 rather than accept what nothing checked', async () => {
    expect(
      await outcome(() =>
        createValidationPipe(Unchecked).transform(
          { note: 'x' },
          asBody(Object),
        ),
      ),
    ).toMatchObject({ status: 400 });
  });
});
