import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PinoLogger } from 'nestjs-pino';
import { eventually } from '../../../test/support/poll.js';
import { RequestLog, requestLogLevel } from './request-log.js';

describe('requestLogLevel', () => {
  it('writes a 500 as an error, any other 5xx (the database away, overload) as a warning, the rest as info', () => {
    expect([200, 404, 499, 500, 501, 503, 599].map(requestLogLevel)).toEqual([
      'info',
      'info',
      'info',
      'error',
      'warn',
      'warn',
      'warn',
    ]);
  });
});

describe('RequestLog: one line per request once it is answered or abandoned, and its id in X-Request-Id', () => {
  let server: Server;
  let url: string;
  /** What each request's handler does after the log follows it. */
  let answer: (request: IncomingMessage, response: ServerResponse) => void;
  const lines: {
    level: string;
    fields: Record<string, unknown>;
    message: string;
  }[] = [];
  const logger = Object.fromEntries(
    ['info', 'warn', 'error'].map((level) => [
      level,
      (fields: Record<string, unknown>, message: string) =>
        lines.push({ level, fields, message }),
    ]),
  ) as unknown as PinoLogger;
  const log = new RequestLog(logger);

  beforeAll(async () => {
    server = createServer((request, response) => {
      log.follow(request, response);
      answer(request, response);
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    lines.length = 0;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("answers the client's sane id, writes one line with its route, status and time, once", async () => {
    answer = (request, response) => {
      Object.assign(request, { route: { path: '/plants' } });
      response.statusCode = 201;
      response.end();
    };
    const response = await fetch(`${url}/plants?x=1`, {
      method: 'POST',
      headers: { 'X-Request-Id': 'client-id-1' },
    });
    expect(response.headers.get('x-request-id')).toBe('client-id-1');
    await eventually('the line', () => (lines.length > 0 ? true : undefined));
    expect(lines).toHaveLength(1);
    const [{ level, fields, message }] = lines;
    expect({ level, message, route: fields.route }).toEqual({
      level: 'info',
      message: 'request completed',
      route: '/plants',
    });
    expect((fields.req as IncomingMessage).url).toBe('/plants?x=1');
    expect((fields.res as ServerResponse).statusCode).toBe(201);
    expect(fields.responseTime).toEqual(expect.any(Number));
  });

  it('makes up an id for a request without one, and writes a 5xx as errored, at its level', async () => {
    answer = (_request, response) => {
      response.statusCode = 503;
      response.end();
    };
    const response = await fetch(`${url}/nowhere`);
    expect(response.headers.get('x-request-id')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-/,
    );
    await eventually('the line', () => (lines.length > 0 ? true : undefined));
    expect(
      lines.map(({ level, message, fields }) => [level, message, fields.route]),
    ).toEqual([['warn', 'request errored', 'unmatched']]);
  });

  it('writes a 500 as an error, and its time from arrival to answer in milliseconds', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const arrival = Date.now();
      answer = (_request, response) => {
        vi.setSystemTime(arrival + 42);
        response.statusCode = 500;
        response.end();
      };
      await fetch(`${url}/broken`);
      await eventually('the line', () => (lines.length > 0 ? true : undefined));
      expect(
        lines.map(({ level, message, fields }) => [
          level,
          message,
          fields.responseTime,
        ]),
      ).toEqual([['error', 'request errored', 42]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the line of a request its client abandoned, when the connection closes', async () => {
    let arrived = false;
    answer = () => {
      arrived = true;
    };
    const aborted = new AbortController();
    const sent = fetch(`${url}/slow`, { signal: aborted.signal }).catch(
      () => 'aborted',
    );
    await eventually('the request to arrive', () =>
      arrived ? true : undefined,
    );
    expect(lines).toHaveLength(0);
    aborted.abort();
    expect(await sent).toBe('aborted');
    await eventually('the line', () => (lines.length > 0 ? true : undefined));
    expect(lines.map(({ message }) => message)).toEqual(['request completed']);
  });

  it("on Fastify's reply: the id goes through reply.header, the line is the raw response's", async () => {
    const headersSet: string[] = [];
    const fastifyServer = createServer((request, response) => {
      log.follow(
        { raw: request, method: request.method ?? '' },
        {
          raw: response,
          header: (name: string, value: string) => {
            headersSet.push(name);
            response.setHeader(name, value);
          },
        },
      );
      response.end();
    });
    await new Promise<void>((resolve) =>
      fastifyServer.listen(0, '127.0.0.1', resolve),
    );
    try {
      const { port } = fastifyServer.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/`);
      expect(response.headers.get('x-request-id')).not.toBeNull();
      expect(headersSet).toEqual(['X-Request-Id']);
      await eventually('the line', () => (lines.length > 0 ? true : undefined));
      expect(lines).toHaveLength(1);
    } finally {
      fastifyServer.closeAllConnections();
      await new Promise((resolve) => fastifyServer.close(resolve));
    }
  });
});
