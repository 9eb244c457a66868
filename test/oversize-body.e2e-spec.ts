import { errorBody } from './support/http.js';
import { isWholeResponse, parseResponse } from './support/raw-http.js';
import { serveForRawConnections } from './support/raw-service.js';
import { TOKEN } from './support/tokens.js';

const LIMIT_MESSAGE = 'The request body is larger than the limit of 16kb.';

function head(headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  return `POST /plants HTTP/1.1\r\nHost: localhost\r\n${lines.join('')}\r\n`;
}

const JSON_WITH_TOKEN = {
  Authorization: `Bearer ${TOKEN}`,
  'Content-Type': 'application/json',
};

describe('bodies over BODY_LIMIT are refused without being read', () => {
  const { connections } = serveForRawConnections();

  it('answers a declared Content-Length over the limit with 413 at once and closes, while the client still holds the body', async () => {
    const connection = await connections.open();
    connection.write(
      head({ ...JSON_WITH_TOKEN, 'Content-Length': '1000000000' }) + '{"id":',
    );

    // The client sends nothing more and keeps the connection: the answer must not wait.
    const answer = parseResponse(await connection.until(isWholeResponse));
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual(errorBody(413, LIMIT_MESSAGE));
    await connection.closed;
  });

  it('cuts a chunked body off as soon as it passes the limit, without waiting for its end', async () => {
    const connection = await connections.open();
    connection.write(
      head({ ...JSON_WITH_TOKEN, 'Transfer-Encoding': 'chunked' }),
    );
    const chunk = `{"id": 1, "name": "${'y'.repeat(17 * 1024)}`;
    connection.write(
      `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`,
    );

    // No last chunk is ever sent.
    const answer = parseResponse(await connection.until(isWholeResponse));
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual(errorBody(413, LIMIT_MESSAGE));
    await connection.closed;
  });

  it('answers 401 before any body rule and closes rather than drain a huge unread body', async () => {
    const connection = await connections.open();
    connection.write(
      head({
        'Content-Type': 'application/json',
        'Content-Length': '1000000000',
      }) + 'x'.repeat(1024),
    );

    const answer = parseResponse(await connection.until(isWholeResponse));
    expect(answer.status).toBe(401);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual(errorBody(401));
    // Well before the 30 s request timeout: the server does not read the rest.
    await expect(
      Promise.race([
        connection.closed.then(() => 'closed'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still open')),
      ]),
    ).resolves.toBe('closed');
  });

  it('keeps the connection for the next request when the whole body was read', async () => {
    const connection = await connections.open();
    const body = '{"id": "x", "name": "Fern"}';
    connection.write(
      head({ ...JSON_WITH_TOKEN, 'Content-Length': String(body.length) }) +
        body,
    );
    const answer = parseResponse(await connection.until(isWholeResponse));
    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe('keep-alive');
  });
});
