import { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';
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
    await expect(reader.read(request, response)).rejects.toThrow(
      /rawBody: true/,
    );
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
