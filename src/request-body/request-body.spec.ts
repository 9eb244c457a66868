import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { bodyLimitBytes, readBody } from './request-body.js';

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

function requestOf(...chunks: string[]): IncomingMessage {
  const stream = Readable.from(chunks.map((chunk) => Buffer.from(chunk)));
  return Object.assign(stream, {
    complete: true,
  }) as unknown as IncomingMessage;
}

describe('readBody', () => {
  it('reads the whole body', async () => {
    await expect(
      readBody(requestOf('{"id":', '1}'), 1024, '1kb'),
    ).resolves.toEqual(Buffer.from('{"id":1}'));
  });
});
