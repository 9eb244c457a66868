import { type RunningApp, startApp } from '../../test/support/app.js';
import { headersHelmetSets } from '../../test/support/helmet-headers.js';
import { errorBody, send } from '../../test/support/http.js';
import { keepNestLogger } from '../../test/support/nest-logs.js';
import { usePlainPostgres } from '../../test/support/plain-postgres.js';
import {
  newPlantJson,
  postPlant,
  uniqueId,
} from '../../test/support/plants.js';
import {
  isWholeResponse,
  parseResponse,
  RawConnection,
  RawConnections,
} from '../../test/support/raw-http.js';
import { TOKEN } from '../../test/support/tokens.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

/** A raw request: its lines, then the blank line. */
const raw = (...lines: string[]): string => `${lines.join('\r\n')}\r\n\r\n`;

/** A create's head, `length` bytes of body declared, with the token unless told otherwise. */
const createHead = (length: number, ...lines: string[]): string =>
  raw(
    'POST /plants HTTP/1.1',
    'Host: localhost',
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    ...lines,
  );

/** A header's list of names, however the adapter's CORS joins them. */
const names = (value: string | null): string[] => (value ?? '').split(/,\s*/);

/** What the service said on a connection until it closed it: one whole answer. */
const closingAnswer = async (connection: RawConnection) =>
  parseResponse(await connection.closed);

/**
 * The front door (front-door.ts) and each adapter's steps (express-door.ts, fastify-door.ts),
 * as createApp puts them in front of the service's routes: seen from a client.
 */
const postgres = usePlainPostgres();

describe.each(['express', 'fastify'])('the front door on %s', (adapter) => {
  keepNestLogger();
  let service: RunningApp | undefined;
  let port = 0;
  const connections = new RawConnections(() => port);

  async function open(settings: Record<string, string> = {}) {
    service = await startApp({
      DATABASE_URL: postgres().url,
      HTTP_ADAPTER: adapter,
      ...settings,
    });
    port = Number(new URL(service.url).port);
    return service;
  }
  afterEach(async () => {
    connections.closeAll();
    await service?.close();
    service = undefined;
  });

  it('sends the security headers and a request id, no X-Powered-By nor ETag, and times what it serves', async () => {
    const { url, app } = await open();
    // HTTP_ADAPTER's adapter, and only its code loaded.
    expect(app.getHttpAdapter().getType()).toBe(adapter);
    const answer = await send(`${url}/health/live`);
    expect(answer.status).toBe(200);
    for (const [name, value] of Object.entries(headersHelmetSets()))
      expect([name, answer.headers.get(name)]).toEqual([name, value]);
    expect(answer.headers.get('x-request-id')).toMatch(/^[\w-]{8,}$/);
    expect(answer.headers.get('x-powered-by')).toBeNull();
    expect(answer.headers.get('etag')).toBeNull();

    // The documentation: served read-only, with the security headers, neither logged nor timed.
    const document = await send(`${url}/openapi.json`);
    expect(document.status).toBe(200);
    expect(document.headers.get('content-security-policy')).toContain(
      "default-src 'self'",
    );
    expect(document.headers.get('x-request-id')).toBeNull();
    const write = await send(`${url}/openapi.json`, { method: 'POST' });
    expect({ status: write.status, allow: write.headers.get('allow') }).toEqual(
      { status: 405, allow: 'GET, HEAD' },
    );
    expect(write.body).toEqual(errorBody(405));
    const metrics = (await send(`${url}/metrics`)).text;
    expect(metrics).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/health\/live",status="200"\} 1$/m,
    );
    expect(metrics).not.toContain('openapi');
  });

  it('checks the token before any body is read: one no parser would take is refused 401', async () => {
    const { url } = await open();
    for (const [type, body] of [
      ['text/plain', 'a fern'],
      ['application/json', '{"id": '],
    ]) {
      const refused = await send(`${url}/plants`, {
        method: 'POST',
        headers: { 'Content-Type': type },
        body,
      });
      expect([type, refused.status]).toEqual([type, 401]);
    }
    // Nor one past the framework's own body limit (Fastify's is 1 MiB): no parser of theirs reads it.
    const large = await (
      await connections.open()
    ).ask(createHead(2_000_000).replace('application/json', 'text/plain'));
    expect(large.status).toBe(401);
    const created = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
      token: TOKEN,
    });
    expect({ status: created.status, body: created.body }).toEqual({
      status: 200,
      body: { name: 'Fern' },
    });
  });

  it("answers what Node's parser refuses, a request without Host, an unknown method and an expectation with the Error body", async () => {
    await open();
    const answers = [];
    for (const request of [
      raw('GET /health/live HTTP/1.1', 'Host: localhost', 'Bad header'),
      raw('GET /health/live HTTP/1.1'),
      raw('TRACE /plants HTTP/1.1', 'Host: localhost'),
      createHead(2, 'Expect: a-new-thing'),
    ]) {
      const connection = await connections.open();
      const { status, body } = await connection.ask(request);
      answers.push({ status, body: JSON.parse(body) as unknown });
    }
    expect(answers).toEqual([
      { status: 400, body: errorBody(400) },
      {
        status: 400,
        body: errorBody(400, 'An HTTP/1.1 request must carry a Host header.'),
      },
      { status: 501, body: errorBody(501) },
      {
        status: 417,
        body: errorBody(417, 'Only the expectation 100-continue is supported.'),
      },
    ]);
  });

  it('sends 100 Continue only once the token is accepted, then reads the body', async () => {
    await open();
    const body = newPlantJson(uniqueId(), 'Fern');
    const refused = await connections.open();
    refused.write(createHead(body.length, 'Expect: 100-continue'));
    const { status } = await closingAnswer(refused);
    expect([status, refused.text.startsWith(CONTINUE)]).toEqual([401, false]);

    const accepted = await connections.open();
    accepted.write(
      createHead(
        body.length,
        'Expect: 100-continue',
        `Authorization: Bearer ${TOKEN}`,
      ),
    );
    expect(await accepted.until((text) => text.length > 0)).toBe(CONTINUE);
    accepted.write(body);
    const answer = parseResponse(
      (await accepted.until((text) => text.includes('"name"'))).slice(
        CONTINUE.length,
      ),
    );
    expect(answer.status).toBe(200);
  });

  it('keeps the connection of an early answer to a small body, and closes it past the body limit', async () => {
    await open({ BODY_LIMIT: '1kb' });
    const small = await connections.open();
    const body = newPlantJson(uniqueId(), 'Fern');
    // No token: answered 401 before the body; the body then read and dropped.
    const first = await small.ask(createHead(body.length));
    expect([first.status, first.headers.connection]).toEqual([
      401,
      'keep-alive',
    ]);
    const before = small.text.length;
    small.write(body + raw('GET /health/live HTTP/1.1', 'Host: localhost'));
    const next = await small.until((text) =>
      isWholeResponse(text.slice(before)),
    );
    expect(parseResponse(next.slice(before)).status).toBe(200);

    const large = await connections.open();
    large.write(createHead(2_000));
    const refused = await closingAnswer(large);
    expect([refused.status, refused.headers.connection]).toEqual([
      401,
      'close',
    ]);
  });

  it('answers a connection past HTTP_MAX_CONNECTIONS 503 before it says anything', async () => {
    await open({ HTTP_MAX_CONNECTIONS: '1' });
    const first = await connections.open();
    const second = await connections.open();
    const { status, body } = await closingAnswer(second);
    expect({ status, body: JSON.parse(body) as unknown }).toEqual({
      status: 503,
      body: errorBody(503),
    });
    expect(
      (await first.ask(raw('GET /health/live HTTP/1.1', 'Host: localhost')))
        .status,
    ).toBe(200);
  });

  it.each([
    ['https://app.example', 'https://app.example'],
    ['*', '*'],
  ])(
    'with CORS_ORIGINS %s, answers a preflight for the create and exposes its headers',
    async (origins, allowed) => {
      const { url } = await open({ CORS_ORIGINS: origins });
      const preflight = await send(`${url}/plants`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://app.example',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type',
        },
      });
      expect({
        status: preflight.status,
        origin: preflight.headers.get('access-control-allow-origin'),
        methods: preflight.headers.get('access-control-allow-methods'),
        headers: names(preflight.headers.get('access-control-allow-headers')),
        maxAge: preflight.headers.get('access-control-max-age'),
      }).toEqual({
        status: 204,
        origin: allowed,
        methods: 'POST',
        headers: ['Authorization', 'Content-Type'],
        maxAge: '600',
      });
      const created = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
        token: TOKEN,
        headers: { Origin: 'https://app.example' },
      });
      expect(
        names(created.headers.get('access-control-expose-headers')),
      ).toEqual(['X-Request-Id', 'Retry-After', 'WWW-Authenticate']);
    },
  );

  it('sends no CORS headers without CORS_ORIGINS', async () => {
    const { url } = await open();
    const created = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
      token: TOKEN,
      headers: { Origin: 'https://app.example' },
    });
    expect(
      [...created.headers.keys()].filter(
        (name) => name.startsWith('access-control-') || name === 'vary',
      ),
    ).toEqual([]);
  });

  it('sheds a create past its limits, and a drain closes the connection of one still running', async () => {
    const { app } = await open({
      CREATE_CONCURRENCY_LIMIT: '1',
      CREATE_WAITING_LIMIT: '0',
    });
    const body = newPlantJson(uniqueId(), 'Fern');
    // A create at work: admitted, its body still on the way.
    const running = await connections.open();
    running.write(
      createHead(body.length, `Authorization: Bearer ${TOKEN}`) +
        body.slice(0, 5),
    );
    const shed = await connections.open();
    const second = await shed.ask(
      createHead(body.length, `Authorization: Bearer ${TOKEN}`) + body,
    );
    expect({
      status: second.status,
      body: JSON.parse(second.body) as unknown,
    }).toEqual({ status: 503, body: errorBody(503) });

    const drained = app.get(GracefulShutdown).drain({
      delayMs: 0,
      timeoutMs: 30_000,
    });
    running.write(body.slice(5));
    const answer = parseResponse(await running.closed);
    expect([answer.status, answer.headers.connection]).toEqual([200, 'close']);
    await drained;
  });
});
