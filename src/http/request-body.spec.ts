import { bodyLimitBytes } from './request-body.js';

describe('bodyLimitBytes', () => {
  it.each([
    ['16384', 16_384],
    ['100b', 100],
    ['16kb', 16_384],
    ['16KB', 16_384],
    ['1mb', 1_048_576],
  ])('reads %s as %i bytes', (limit, bytes) => {
    expect(bodyLimitBytes(limit)).toBe(bytes);
  });
});
