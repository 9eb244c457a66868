import { errorBody } from './support/http.js';
import { uniqueId } from './support/plants.js';
import { isWholeResponse, parseResponse } from './support/raw-http.js';
import { serveForRawConnections } from './support/raw-service.js';
import { countPlants } from './support/stored-plants.js';
import { TOKEN } from './support/tokens.js';

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

function request(lines: string[]): string {
  return `${['POST /plants HTTP/1.1', ...lines].join('\r\n')}\r\n\r\n`;
}

describe('Host and Expect headers', () => {
  const served = serveForRawConnections();
  const { connections } = served;

  it.each([
    [
      'an HTTP/1.1 request without Host',
      400,
      [`Authorization: Bearer ${TOKEN}`, 'Content-Length: 0'],
      'An HTTP/1.1 request must carry a Host header.',
    ],
    [
      'an expectation other than 100-continue',
      417,
      [
        'Host: localhost',
        `Authorization: Bearer ${TOKEN}`,
        'Expect: foo',
        'Content-Length: 0',
      ],
      'Only the expectation 100-continue is supported.',
    ],
  ])(
    'answers %s with %i and the Error body',
    async (_case, status, headers, message) => {
      const connection = await connections.open();
      connection.write(request(headers));
      const answer = parseResponse(await connection.closed);
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body)).toEqual(errorBody(status, message));
    },
  );

  it('sends 100 Continue once the token and headers are accepted, then creates the plant', async () => {
    const id = uniqueId();
    const body = `{"id": ${id}, "name": "Fern"}`;
    const connection = await connections.open();
    connection.write(
      request([
        'Host: localhost',
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        'Expect: 100-continue',
      ]),
    );
    expect(await connection.until((text) => text.length > 0)).toBe(CONTINUE);

    connection.write(body);
    const text = await connection.until((received) =>
      isWholeResponse(received.slice(CONTINUE.length)),
    );
    const answer = parseResponse(text.slice(CONTINUE.length));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ name: 'Fern' });
    expect(await countPlants(served.app.dataSource, id)).toBe(1);
  });

  it.each([
    ['no token', 401, ['Content-Type: application/json', 'Content-Length: 30']],
    [
      'a wrong media type',
      415,
      [
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: text/plain',
        'Content-Length: 30',
      ],
    ],
    [
      'a declared length over the limit',
      413,
      [
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: application/json',
        'Content-Length: 1000000',
      ],
    ],
  ])(
    'answers %s with the final status at once, never 100 Continue',
    async (_case, status, headers) => {
      const connection = await connections.open();
      connection.write(
        request(['Host: localhost', ...headers, 'Expect: 100-continue']),
      );
      // The client waits for 100 Continue and sends no body.
      const text = await connection.until(isWholeResponse);
      expect(text).not.toContain('100 Continue');
      const answer = parseResponse(text);
      expect(answer.status).toBe(status);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual(errorBody(status));
    },
  );
});
