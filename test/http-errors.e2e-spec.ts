import { request as httpRequest } from 'node:http';
import { errorBody, expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { useApp } from './support/app.js';
import { RawConnection } from './support/raw-http.js';
import { countPlants } from './support/stored-plants.js';
import { OTHER_TOKEN, TOKEN } from './support/tokens.js';

const CHALLENGE = 'Bearer realm="plant-store"';
const MISSING_TOKEN =
  'A valid bearer token is required in the Authorization header.';
const INVALID_TOKEN_CHALLENGE =
  'Bearer realm="plant-store", error="invalid_token"';

/** Sends raw bytes with exactly the headers given, nothing added by a client library. */
function rawPost(
  baseUrl: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { hostname, port, path: '/plants', method: 'POST', headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('HTTP errors', () => {
  const service = useApp();

  describe('400: the body is not one JSON object', () => {
    it.each([
      [
        'malformed JSON',
        '{"id": 1, "name": ',
        'The request body is not valid JSON.',
      ],
      [
        'trailing garbage',
        '{"id": 1, "name": "a"} x',
        'The request body is not valid JSON.',
      ],
      ['single quotes', "{'id': 1}", 'The request body is not valid JSON.'],
      [
        'an array',
        '[{"id": 1, "name": "a"}]',
        'The request body must be a JSON object.',
      ],
      ['a string', '"plant"', 'The request body must be a JSON object.'],
      ['a number', '42', 'The request body must be a JSON object.'],
      ['null', 'null', 'The request body must be a JSON object.'],
      [
        'a key given twice',
        '{"id": 1, "name": "a", "name": "b"}',
        'The request body is not valid JSON: an object gives one key two different values.',
      ],
    ])('answers 400 for %s', async (_case, json, message) => {
      const answer = await postPlant(service().url, json);

      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      expect(answer.body).toEqual(errorBody(400, message));
    });

    it.each([
      [
        'an empty body',
        { 'Content-Length': '0' },
        undefined,
        'The request body is empty; send a JSON object.',
      ],
      [
        'a body with no Content-Length and nothing in it',
        {},
        undefined,
        'The request body is empty; send a JSON object.',
      ],
      [
        'bytes that are not UTF-8',
        {},
        Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x7d]),
        'The request body is not valid UTF-8.',
      ],
    ])('answers 400 for %s', async (_case, headers, body, message) => {
      const answer = await rawPost(
        service().url,
        {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          ...headers,
        },
        body,
      );
      expectErrorAnswer(answer, 400, message);
    });

    it('never echoes the body it refuses', async () => {
      const answer = await postPlant(
        service().url,
        '{"id": "<script>secret</script>", "name": 1',
      );
      expectErrorAnswer(answer, 400);
      expect(answer.text).not.toContain('secret');
    });
  });

  describe('401: authentication', () => {
    const body = () => newPlantJson(uniqueId(), 'Fern');

    it('answers 401 with a bare challenge when no token is sent', async () => {
      const answer = await postPlant(service().url, body(), { token: null });

      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(answer.body).toEqual(errorBody(401, MISSING_TOKEN));
    });

    it.each([
      [
        'an unknown token',
        { Authorization: 'Bearer not-a-known-token-000000' },
      ],
      [
        'a token with a wrong last character',
        { Authorization: `Bearer ${TOKEN.slice(0, -1)}x` },
      ],
      ['a token with extra parts', { Authorization: `Bearer ${TOKEN} extra` }],
    ])('answers 401 invalid_token for %s', async (_case, headers) => {
      const answer = await postPlant(service().url, body(), {
        token: null,
        headers,
      });

      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(
        INVALID_TOKEN_CHALLENGE,
      );
      expect(answer.body).toEqual(errorBody(401));
    });

    it.each([
      [
        'another scheme',
        {
          Authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`,
        },
      ],
      ['the scheme alone', { Authorization: 'Bearer' }],
      ['a token without a scheme', { Authorization: TOKEN }],
    ])('answers 401 with a bare challenge for %s', async (_case, headers) => {
      const answer = await postPlant(service().url, body(), {
        token: null,
        headers,
      });

      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(answer.body).toEqual(errorBody(401));
    });

    it('reads the token from the Authorization header only, never the query string', async () => {
      const id = uniqueId();
      const answer = await send(
        `${service().url}/plants?access_token=${TOKEN}`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: newPlantJson(id, 'Fern'),
        },
      );

      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(answer.body).toEqual(errorBody(401, MISSING_TOKEN));
      expect(await countPlants(service().dataSource, id)).toBe(0);
    });

    it('never reads a token from the body', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service().url,
        `{"id": ${id}, "name": "Fern", "access_token": "${TOKEN}"}`,
        {
          token: null,
        },
      );

      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
      expect(answer.body).toEqual(errorBody(401, MISSING_TOKEN));
      expect(await countPlants(service().dataSource, id)).toBe(0);
    });

    it.each(['bearer', 'BEARER', 'BeArEr'])(
      'accepts the scheme written %s',
      async (scheme) => {
        const answer = await postPlant(service().url, body(), {
          token: null,
          headers: { Authorization: `${scheme} ${TOKEN}` },
        });
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ name: 'Fern' });
      },
    );

    it("accepts the suite's default token", async () => {
      const answer = await postPlant(service().url, body(), { token: TOKEN });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
    });

    it('accepts every configured token', async () => {
      const answer = await postPlant(service().url, body(), {
        token: OTHER_TOKEN,
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
    });

    it('checks the token before the body: a bad body without a token is 401', async () => {
      for (const [json, contentType] of [
        ['{not json', 'application/json'],
        ['{"id": "x"}', 'application/json'],
        ['name=fern', 'text/plain'],
        ['x'.repeat(64 * 1024), 'application/json'],
      ]) {
        const answer = await postPlant(service().url, json, {
          token: null,
          headers: { 'Content-Type': contentType },
        });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('www-authenticate')).toBe(CHALLENGE);
        expect(answer.body).toEqual(errorBody(401, MISSING_TOKEN));
      }
    });
  });

  describe('routing', () => {
    it.each([
      ['GET', '/'],
      ['GET', '/plants/1'],
      ['POST', '/plant'],
      ['POST', '/v1/plants'],
    ])(
      'answers 404 for %s %s with an Error body that does not echo the path',
      async (method, path) => {
        const answer = await send(`${service().url}${path}`, {
          method,
          headers: { Authorization: `Bearer ${TOKEN}` },
        });

        expect(answer.status).toBe(404);
        expect(answer.headers.get('content-type')).toMatch(
          /^application\/json/,
        );
        expect(answer.body).toEqual(
          errorBody(404, 'No resource exists at this path.'),
        );
      },
    );

    it.each(['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
      'answers 405 with Allow: POST for %s /plants',
      async (method) => {
        const headerSets: Record<string, string>[] = [
          {},
          { Authorization: `Bearer ${TOKEN}` },
        ];
        for (const headers of headerSets) {
          const answer = await send(`${service().url}/plants`, {
            method,
            headers,
          });

          expect(answer.status).toBe(405);
          expect(answer.headers.get('allow')).toBe('POST');
          expect(answer.body).toEqual(
            errorBody(405, 'This method is not allowed on this path.'),
          );
        }
      },
    );

    it.each([
      ['an unknown method', 'FETCH /plants HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a broken request line', 'POST /plants HTTP/9\r\n\r\n', 400],
      [
        'headers over 16 KiB',
        `POST /plants HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
      ],
    ])(
      'answers %s, which Node itself rejects, with an Error body',
      async (_case, rawRequest, status) => {
        const connection = await RawConnection.open(
          Number(new URL(service().url).port),
        );
        connection.socket.end(rawRequest);
        const reply = await connection.closed;
        const [head, body] = reply.split('\r\n\r\n');
        expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(head).toMatch(/content-type: application\/json/i);
        expect(JSON.parse(body)).toEqual(errorBody(status));
      },
    );

    it('sends no X-Powered-By header', async () => {
      const answers = await Promise.all([
        postPlant(service().url, newPlantJson(uniqueId(), 'Fern')),
        postPlant(service().url, '{', {}),
        send(`${service().url}/nowhere`),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 400, 404]);
      for (const answer of answers)
        expect(answer.headers.get('x-powered-by')).toBeNull();
    });
  });

  describe('413: the body limit', () => {
    it('answers 413 for a body over BODY_LIMIT (16 KiB by default), and writes nothing', async () => {
      const id = uniqueId();
      const answer = await postPlant(
        service().url,
        `{"id": ${id}, "name": "${'x'.repeat(16 * 1024)}"}`,
      );

      expectErrorAnswer(
        answer,
        413,
        'The request body is larger than the limit of 16kb.',
      );
      expect(await countPlants(service().dataSource, id)).toBe(0);
    });

    it('accepts a body just under the limit', async () => {
      const id = uniqueId();
      const padding = 16 * 1024 - newPlantJson(id, '').length;
      const answer = await postPlant(
        service().url,
        newPlantJson(id, 'x'.repeat(padding)),
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'x'.repeat(padding) });
    });

    it('answers 413 for a chunked body that grows past the limit', async () => {
      const chunks = (async function* () {
        yield new TextEncoder().encode('{"id": 1, "name": "');
        for (let index = 0; index < 20; index += 1)
          yield new TextEncoder().encode('y'.repeat(1024));
        yield new TextEncoder().encode('"}');
      })();
      const response = await fetch(`${service().url}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
        },
        body: ReadableStream.from(chunks),
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(await response.json()).toEqual(errorBody(413));
    });
  });

  describe('415: the media type', () => {
    /** A new plant posted with `headers` beside the token. */
    const postFern = (headers: Record<string, string>) =>
      postPlant(service().url, newPlantJson(uniqueId(), 'Fern'), { headers });

    it('answers 415 for a compressed body, saying so', async () => {
      const answer = await postFern({ 'Content-Encoding': 'gzip' });
      expectErrorAnswer(
        answer,
        415,
        'The request body must not be compressed: Content-Encoding is not supported.',
      );
    });

    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'application/json-patch+json',
      'application/json; charset=latin1',
    ])('answers 415 for Content-Type %s', async (contentType) => {
      const answer = await postFern({ 'Content-Type': contentType });
      expectErrorAnswer(
        answer,
        415,
        'The request body must be sent with Content-Type: application/json.',
      );
    });

    it('answers 415 for a body sent without a Content-Type', async () => {
      const answer = await rawPost(
        service().url,
        { Authorization: `Bearer ${TOKEN}` },
        Buffer.from(newPlantJson(uniqueId(), 'Fern')),
      );
      expectErrorAnswer(answer, 415);
    });

    it.each([
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
    ])('accepts Content-Type %s', async (contentType) => {
      const answer = await postFern({ 'Content-Type': contentType });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
    });
  });
});
