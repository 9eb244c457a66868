import { ArgumentMetadata } from '@nestjs/common';
import { ApiError } from '../../errors/api-error.js';
import { createValidationPipe } from '../../validation-pipe/validation.pipe.js';
import { NewPlant } from './new-plant.dto.js';

const metadata: ArgumentMetadata = { type: 'body', metatype: NewPlant };
const pipe = createValidationPipe();

async function validate(body: Record<string, unknown>): Promise<unknown> {
  return pipe.transform(body, metadata);
}

async function rejection(
  body: Record<string, unknown>,
): Promise<{ status: number; message: string }> {
  const error = await validate(body).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  const apiError = error as ApiError;
  return { status: apiError.getStatus(), message: apiError.message };
}

const INT64_RULE =
  'id must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or an exponent';

describe('NewPlant validation', () => {
  it('accepts the int64 edges and empty strings, and drops undeclared keys', async () => {
    for (const id of [-(2n ** 63n), 2n ** 63n - 1n, 0n]) {
      const plant = await validate({
        id,
        name: '',
        tag: '',
        extra: 'x',
        colour: 1n,
      });
      expect(plant).toBeInstanceOf(NewPlant);
      expect(plant).toEqual({ id, name: '', tag: '' });
    }
  });

  it('accepts a plant without a tag', async () => {
    expect(await validate({ id: 1n, name: 'Fern' })).toEqual({
      id: 1n,
      name: 'Fern',
    });
  });

  it.each([
    ['just past the top', 2n ** 63n],
    ['just past the bottom', -(2n ** 63n) - 1n],
    ['a string of digits', '12'],
    ['a fraction', 1.5],
    ['a JS number (written with an exponent or fraction)', 12],
    ['a boolean', true],
    ['null', null],
  ])('refuses an id that is %s', async (_case, id) => {
    expect(await rejection({ id, name: 'Fern' })).toEqual({
      status: 400,
      message: `${INT64_RULE}.`,
    });
  });

  it('names each missing field', async () => {
    expect(await rejection({})).toEqual({
      status: 400,
      message: 'id is required; name is required.',
    });
  });

  it.each([
    ['name', { id: 1n, name: 7 }, 'name must be a string.'],
    ['name', { id: 1n, name: null }, 'name must be a string.'],
    ['tag', { id: 1n, name: 'Fern', tag: null }, 'tag must be a string.'],
    ['tag', { id: 1n, name: 'Fern', tag: ['a'] }, 'tag must be a string.'],
    [
      'name',
      { id: 1n, name: 'a\u0000b' },
      'name must be well-formed Unicode text without NUL characters.',
    ],
    [
      'tag',
      { id: 1n, name: 'Fern', tag: '\ud800' },
      'tag must be well-formed Unicode text without NUL characters.',
    ],
  ])('refuses a bad %s', async (_field, body, message) => {
    expect(await rejection(body)).toEqual({ status: 400, message });
  });

  it('never echoes the value it refuses', async () => {
    const { message } = await rejection({
      id: 'secret-looking-value',
      name: 'Fern',
    });
    expect(message).not.toContain('secret-looking-value');
  });
});
