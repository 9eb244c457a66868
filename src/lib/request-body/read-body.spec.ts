import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { ApiError } from '../errors/api-error.js';
import { readBody } from './read-body.js';

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

/** The reader's listeners still on the request: none once it has settled. */
const attached = (request: NodeJS.EventEmitter) =>
  ['data', 'end', 'error', 'close'].map((event) =>
    request.listenerCount(event),
  );

/** A body still arriving: the test pushes its chunks and ends or breaks it. */
function arriving(): PassThrough & { complete: boolean } {
  return Object.assign(new PassThrough(), { complete: false });
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw new Error('expected an ApiError');
  return { status: error.getStatus(), message: error.message };
}

describe('readBody, at its edges', () => {
  it('reads a body of exactly the limit, in chunks', async () => {
    await expect(
      readBody(requestOf('12345', '67890'), 10, '10b'),
    ).resolves.toEqual(Buffer.from('1234567890'));
  });

  it('refuses one byte over the limit with 413 naming the limit, and lets go of the request', async () => {
    const request = requestOf('12345', '678901');
    expect(await refusal(readBody(request, 10, '10b'))).toEqual({
      status: 413,
      message: 'The request body is larger than the limit of 10b.',
    });
    // Nothing of the reader stays attached to the socket's request.
    expect(attached(request)).toEqual([0, 0, 0, 0]);
  });

  it.each([
    ['breaks mid-body', 'error'],
    ['closes before the body is complete', 'close'],
  ])(
    'answers 400 when the connection %s, and lets go of the request',
    async (_case, event) => {
      const request = arriving();
      const read = readBody(request as unknown as IncomingMessage, 100, '100b');
      request.write('{"id":');
      request.emit(event, new Error('ECONNRESET'));
      expect(await refusal(read)).toEqual({
        status: 400,
        message: 'The request body was cut off before its end.',
      });
      expect(attached(request)).toEqual([0, 0, 0, 0]);
    },
  );

  it('keeps the body of a request that closed once complete', async () => {
    const request = arriving();
    const read = readBody(request as unknown as IncomingMessage, 100, '100b');
    request.complete = true;
    request.emit('close');
    request.end('{"id":1}');
    await expect(read).resolves.toEqual(Buffer.from('{"id":1}'));
    expect(attached(request)).toEqual([0, 0, 0, 0]);
  });
});
