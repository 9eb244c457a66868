import type { IncomingMessage } from 'node:http';
import {
  bodyLimitBytes,
  declaredLength,
  declaresBody,
  isBodyLimit,
} from './body-limit.js';

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

describe('isBodyLimit', () => {
  it.each(['16384', '100b', '16kb', '16KB', '1mb', '1Mb'])(
    'takes %j',
    (limit) => {
      expect(isBodyLimit(limit)).toBe(true);
    },
  );

  it.each(['', 'kb', '16 kb', '1gb', '16kbx', 'x16kb', '-1', '1.5mb'])(
    'refuses %j',
    (limit) => {
      expect(isBodyLimit(limit)).toBe(false);
    },
  );
});

const withHeaders = (headers: Record<string, string>) =>
  ({ headers }) as unknown as IncomingMessage;

describe('what the headers say of a body', () => {
  it('reads the declared length, or none when nothing is declared', () => {
    expect(declaredLength(withHeaders({ 'content-length': '12' }))).toBe(12);
    expect(declaredLength(withHeaders({}))).toBeUndefined();
  });

  it.each([
    [{ 'content-length': '5' }, true],
    [{ 'transfer-encoding': 'chunked' }, true],
    [{ 'content-length': '0' }, false],
    [{}, false],
  ])('a request with %j declares a body: %s', (headers, declared) => {
    expect(declaresBody(withHeaders(headers))).toBe(declared);
  });
});
