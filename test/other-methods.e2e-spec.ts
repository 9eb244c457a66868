import {
  isWholeResponse,
  parseResponse,
  RawConnection,
  type RawResponse,
} from './support/raw-http.js';
import { useApp } from './support/app.js';
import { errorBody, send } from './support/http.js';

/** Every method a fuzzer tries but TRACE (below), which fetch refuses to send. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Served beside the documented operations: the document itself, Swagger UI, metrics. */
const UNDOCUMENTED_READ_PATHS = [
  '/openapi.json',
  '/openapi.yaml',
  '/docs',
  '/metrics',
];

async function request(
  url: string,
  method: string,
  path: string,
): Promise<RawResponse> {
  const connection = await RawConnection.open(Number(new URL(url).port));
  try {
    connection.write(
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`,
    );
    return parseResponse(await connection.until(isWholeResponse));
  } finally {
    connection.socket.destroy();
  }
}

/**
 * HTTP's rule (RFC 9110, 15.5.6) as a schema-driven fuzzer checks it: a method a path does
 * not serve is 405 with the methods it does in Allow, never a 404, on every path served.
 */
describe('another method on every path the service serves', () => {
  const service = useApp();
  let served: Map<string, string[]>;

  beforeAll(async () => {
    const document = (await send(`${service().url}/openapi.json`)).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    served = new Map(
      Object.entries(document.paths).map(([path, operations]) => [
        path,
        Object.keys(operations).map((method) => method.toUpperCase()),
      ]),
    );
    for (const path of UNDOCUMENTED_READ_PATHS) served.set(path, ['GET']);
  });

  it('covers the probes, the create and the documentation', () => {
    expect([...served.keys()].sort()).toEqual(
      [
        '/health',
        '/health/live',
        '/health/ready',
        '/plants',
        ...UNDOCUMENTED_READ_PATHS,
      ].sort(),
    );
  });

  it('answers 405 with Allow and an Error body, for each path and method not served', async () => {
    const wrong: string[] = [];
    for (const [path, allowed] of served) {
      // HEAD is answered wherever GET is.
      const allow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
      for (const method of METHODS.filter((m) => !allowed.includes(m))) {
        const answer = await request(service().url, method, path);
        const body: unknown = JSON.parse(answer.body || 'null');
        const expected = {
          status: 405,
          allow: allow.join(', '),
          body: errorBody(405, 'This method is not allowed on this path.'),
        };
        try {
          expect({
            status: answer.status,
            allow: answer.headers.allow,
            body,
          }).toEqual(expected);
        } catch {
          wrong.push(
            `${method} ${path}: ${answer.status} allow=${answer.headers.allow}`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('answers TRACE, a method no route of the service can have, 501 with an Error body on every path', async () => {
    const wrong: string[] = [];
    for (const path of [...served.keys(), '/no-such-path']) {
      const answer = await request(service().url, 'TRACE', path);
      const body: unknown = JSON.parse(answer.body || 'null');
      if (
        answer.status !== 501 ||
        JSON.stringify(body) !==
          JSON.stringify(
            errorBody(501, 'This method is not supported by this service.'),
          )
      )
        wrong.push(`TRACE ${path}: ${answer.status} ${answer.body}`);
    }
    expect(wrong).toEqual([]);
  });

  it('still serves the read-only paths to GET and HEAD, and a missing asset stays 404', async () => {
    for (const path of UNDOCUMENTED_READ_PATHS) {
      expect((await request(service().url, 'GET', path)).status).toBe(200);
      expect(
        (await send(`${service().url}${path}`, { method: 'HEAD' })).status,
      ).toBe(200);
    }
    expect((await send(`${service().url}/docs/no-such-asset.css`)).status).toBe(
      404,
    );
  });
});
