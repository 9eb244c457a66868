import { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
import { holdContinue } from './expect-continue.js';
import { JsonBodyReader } from './json-body.reader.js';

const reader = new JsonBodyReader('1kb');
const response = {} as Response;
const BEYOND_2_53 = '9007199254740993';

/** A JSON request whose body an application body parser has already read. */
async function readByTheApplication(
  text: string,
  kept: { rawBody?: Buffer; body?: unknown },
): Promise<Request> {
  const stream = Readable.from([Buffer.from(text)]);
  for await (const chunk of stream) void chunk;
  return Object.assign(stream, {
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
    },
    complete: true,
    ...kept,
  }) as unknown as Request;
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  return error instanceof ApiError ? error.getStatus() : 500;
}

describe('JsonBodyReader, behind an application body parser', () => {
  it("re-reads Nest's raw body (rawBody: true) exactly, beyond 2^53 too", async () => {
    const text = `{"id": ${BEYOND_2_53}, "name": "Fern"}`;
    const request = await readByTheApplication(text, {
      rawBody: Buffer.from(text),
      body: JSON.parse(text) as unknown,
    });
    await expect(reader.read(request, response)).resolves.toEqual({
      id: BigInt(BEYOND_2_53),
      name: 'Fern',
    });
  });

  it.each([
    ['beyond the limit', 413, `{"name": "${'x'.repeat(2000)}"}`],
    ['with a duplicate key', 400, '{"id": 1, "id": 2, "name": "Fern"}'],
  ])(
    'holds the raw body to the same rules as its own reading: %s, %i',
    async (_rule, status, text) => {
      const request = await readByTheApplication(text, {
        rawBody: Buffer.from(text),
      });
      expect(await statusOf(reader.read(request, response))).toBe(status);
    },
  );

  it("takes JSON.parse's integers within ±(2^53 - 1) as the exact bigints they are", async () => {
    const text = '{"id": 9007199254740991, "name": "Fern", "tag": 1.5}';
    const request = await readByTheApplication(text, {
      body: JSON.parse(text) as unknown,
    });
    await expect(reader.read(request, response)).resolves.toEqual({
      id: 9007199254740991n,
      name: 'Fern',
      tag: 1.5,
    });
  });

  it('fails (500) rather than store an id JSON.parse may have rounded', async () => {
    const text = `{"id": ${BEYOND_2_53}, "name": "Fern"}`;
    const request = await readByTheApplication(text, {
      body: JSON.parse(text) as unknown,
    });
    // The message is logged with the 500: it names the fix.
    await expect(reader.read(request, response)).rejects.toMatchObject({
      name: 'InexactIntegerError',
      message:
        "The request body was parsed by the application's JSON body parser (JSON.parse), " +
        'which rounds integers beyond 2^53, and its bytes were not kept. Create the ' +
        'application with { rawBody: true } (every other route stays as it was) so that ' +
        'the plant route re-reads the exact bytes; see docs/using-the-modules.md.',
    });
    expect(
      await statusOf(
        reader.read(
          await readByTheApplication(text, {
            body: JSON.parse(text) as unknown,
          }),
          response,
        ),
      ),
    ).toBe(500);
  });

  it('fails at once, instead of waiting forever, when the reader kept nothing', async () => {
    const request = await readByTheApplication('{"id":1}', {});
    await expect(reader.read(request, response)).rejects.toThrow(
      /kept nothing/,
    );
  });
});

/** What a client is answered for a failure: its status and message, as the filter sends them. */
async function answerOf(
  promise: Promise<unknown>,
): Promise<{ status: number; message: string }> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected a refusal, read ${JSON.stringify(value)}`);
    },
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ApiError)) throw error;
  return { status: error.getStatus(), message: error.message };
}

const json = { 'content-type': 'application/json' };

/**
 * A request the service reads itself (no application body parser): its body still to
 * come, in the chunks given, with Node's `complete` set once it has all arrived.
 */
function ownRequest(
  headers: Record<string, string>,
  ...chunks: (string | Buffer)[]
): Request {
  const bytes = chunks.map((chunk) => Buffer.from(chunk));
  const stream = Readable.from(bytes);
  const length = bytes.reduce((total, chunk) => total + chunk.length, 0);
  stream.once('end', () => Object.assign(stream, { complete: true }));
  return Object.assign(stream, {
    headers: { 'content-length': String(length), ...headers },
    complete: false,
  }) as unknown as Request;
}

/** A request whose body never arrives: only what the headers say may decide its answer. */
function headersOnly(headers: Record<string, string>): Request {
  return Object.assign(new Readable({ read() {} }), {
    headers,
    complete: false,
  }) as unknown as Request;
}

describe('JsonBodyReader, reading the body itself', () => {
  const body = '{"id": 1, "name": "Fern"}';

  it.each([
    'application/json',
    'Application/JSON',
    ' application/json ; charset=utf-8',
    'application/json; charset="UTF-8"',
    'application/json; charset = utf-8 ',
    'application/json; boundary=x',
    'application/json;',
  ])('accepts the media type %j', async (contentType) => {
    await expect(
      reader.read(ownRequest({ 'content-type': contentType }, body), response),
    ).resolves.toEqual({ id: 1n, name: 'Fern' });
  });

  it.each([
    'text/plain',
    'application/jsonx',
    'application/json-patch+json',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/json; charset',
    'application/json; boundary=x; charset=utf-8x',
  ])('refuses the media type %j with 415', async (contentType) => {
    expect(
      await answerOf(
        reader.read(
          ownRequest({ 'content-type': contentType }, body),
          response,
        ),
      ),
    ).toEqual({
      status: 415,
      message:
        'The request body must be sent with Content-Type: application/json.',
    });
  });

  it('refuses a body sent without a Content-Type with 415, chunked or declared', async () => {
    const declared: Record<string, string>[] = [
      {},
      { 'transfer-encoding': 'chunked' },
    ];
    for (const headers of declared)
      expect(
        (await answerOf(reader.read(ownRequest(headers, body), response)))
          .status,
      ).toBe(415);
  });

  it('answers a request without a body 400 (empty), whatever its Content-Type', async () => {
    const empty = {
      status: 400,
      message: 'The request body is empty; send a JSON object.',
    };
    expect(await answerOf(reader.read(ownRequest({}), response))).toEqual(
      empty,
    );
    expect(
      await answerOf(
        reader.read(ownRequest({ 'content-length': '0' }), response),
      ),
    ).toEqual(empty);
    expect(await answerOf(reader.read(ownRequest(json), response))).toEqual(
      empty,
    );
  });

  it.each(['gzip', 'br', ' GZIP '])(
    'refuses a compressed body (Content-Encoding %j) with 415',
    async (encoding) => {
      expect(
        await answerOf(
          reader.read(
            ownRequest({ ...json, 'content-encoding': encoding }, body),
            response,
          ),
        ),
      ).toEqual({
        status: 415,
        message:
          'The request body must not be compressed: Content-Encoding is not supported.',
      });
    },
  );

  it.each(['identity', ' Identity '])(
    'reads a body whose Content-Encoding is %j',
    async (encoding) => {
      await expect(
        reader.read(
          ownRequest({ ...json, 'content-encoding': encoding }, body),
          response,
        ),
      ).resolves.toEqual({ id: 1n, name: 'Fern' });
    },
  );

  it('refuses a declared length over the limit with 413 before reading a byte', async () => {
    // The body never arrives: an answer at all proves the headers alone decided it.
    expect(
      await answerOf(
        reader.read(
          headersOnly({ ...json, 'content-length': '1025' }),
          response,
        ),
      ),
    ).toEqual({
      status: 413,
      message: 'The request body is larger than the limit of 1kb.',
    });
  });

  it('reads a body of exactly the limit', async () => {
    const name = 'x'.repeat(1024 - '{"name":""}'.length);
    await expect(
      reader.read(ownRequest(json, `{"name":"${name}"}`), response),
    ).resolves.toEqual({ name });
  });

  it('refuses a chunked body that grows past the limit with 413', async () => {
    const request = ownRequest(
      { ...json, 'transfer-encoding': 'chunked' },
      '{"name":"',
      'x'.repeat(1020),
      '"}',
    );
    delete request.headers['content-length'];
    expect((await answerOf(reader.read(request, response))).status).toBe(413);
  });

  it.each([
    ['an array', '[1, 2]'],
    ['null', 'null'],
    ['a number', '12'],
    ['a string', '"Fern"'],
    ['true', 'true'],
  ])('refuses %s with 400: the body must be an object', async (_kind, text) => {
    expect(
      await answerOf(reader.read(ownRequest(json, text), response)),
    ).toEqual({
      status: 400,
      message: 'The request body must be a JSON object.',
    });
  });

  it('refuses text that is not JSON with 400, quoting none of it', async () => {
    expect(
      await answerOf(reader.read(ownRequest(json, '{"id": 1,'), response)),
    ).toEqual({ status: 400, message: 'The request body is not valid JSON.' });
  });

  it('refuses bytes that are not UTF-8 with 400', async () => {
    const request = ownRequest(
      json,
      Buffer.concat([
        Buffer.from('{"name": "'),
        Buffer.from([0xff]),
        Buffer.from('"}'),
      ]),
    );
    expect(await answerOf(reader.read(request, response))).toEqual({
      status: 400,
      message: 'The request body is not valid UTF-8.',
    });
  });

  describe('Expect: 100-continue', () => {
    const continueResponse = () =>
      ({
        headersSent: false,
        writeContinue: vi.fn(),
      }) as unknown as Response & {
        writeContinue: ReturnType<typeof vi.fn>;
      };

    it('tells a waiting client to send its body once its headers are accepted', async () => {
      const request = ownRequest(json, body);
      const answer = continueResponse();
      holdContinue(request);
      await expect(reader.read(request, answer)).resolves.toEqual({
        id: 1n,
        name: 'Fern',
      });
      expect(answer.writeContinue).toHaveBeenCalledTimes(1);
    });

    it('never asks for a body its headers already refuse', async () => {
      const request = headersOnly({
        'content-type': 'text/plain',
        'content-length': '5',
      });
      const answer = continueResponse();
      holdContinue(request);
      expect((await answerOf(reader.read(request, answer))).status).toBe(415);
      expect(answer.writeContinue).not.toHaveBeenCalled();
    });
  });
});

describe('JsonBodyReader, behind an application body parser, at the edges', () => {
  it('refuses a raw body over the limit with 413 when no length was declared (chunked)', async () => {
    const text = `{"name": "${'x'.repeat(1100)}"}`;
    const request = await readByTheApplication(text, {
      rawBody: Buffer.from(text),
    });
    delete request.headers['content-length'];
    expect(await answerOf(reader.read(request, response))).toEqual({
      status: 413,
      message: 'The request body is larger than the limit of 1kb.',
    });
  });

  it('reads a raw body of exactly the limit', async () => {
    const name = 'x'.repeat(1024 - '{"name":""}'.length);
    const text = `{"name":"${name}"}`;
    const request = await readByTheApplication(text, {
      rawBody: Buffer.from(text),
    });
    delete request.headers['content-length'];
    await expect(reader.read(request, response)).resolves.toEqual({ name });
  });

  it.each([
    ['an array', [1, 2]],
    ['null', null],
    ['a number', 12],
    ['a string', 'Fern'],
  ])(
    "refuses JSON.parse's %s with 400: the body must be an object",
    async (_kind, parsed) => {
      const request = await readByTheApplication(JSON.stringify(parsed), {
        body: parsed,
      });
      expect(await answerOf(reader.read(request, response))).toEqual({
        status: 400,
        message: 'The request body must be a JSON object.',
      });
    },
  );

  it('takes the most negative exact integer, and fails on the first inexact one', async () => {
    const exact = await readByTheApplication('{}', {
      body: { id: -9007199254740991 },
    });
    await expect(reader.read(exact, response)).resolves.toEqual({
      id: -9007199254740991n,
    });
    const inexact = await readByTheApplication('{}', {
      body: { id: -9007199254740992 },
    });
    await expect(reader.read(inexact, response)).rejects.toThrow(
      /rawBody: true/,
    );
  });
});
