import {
  ArgumentsHost,
  BadRequestException,
  InternalServerErrorException,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ApiError } from './api-error.js';
import { ApiExceptionFilter } from './api-exception.filter.js';

interface Captured {
  status?: number;
  headers: Record<string, string | number>;
  body?: unknown;
  destroyed: boolean;
}

function hostFor(
  captured: Captured,
  {
    headersSent = false,
    requestId,
  }: { headersSent?: boolean; requestId?: string } = {},
): ArgumentsHost {
  // What ErrorAnswer writes with: Node's writeHead and end.
  let declaredLength: number | undefined;
  const response = {
    headersSent,
    writeHead(code: number, headers: Record<string, string | number>) {
      captured.status = code;
      const {
        'Content-Type': type,
        'Content-Length': length,
        ...rest
      } = headers;
      expect(type).toBe('application/json; charset=utf-8');
      Object.assign(captured.headers, rest);
      declaredLength = Number(length);
      return response;
    },
    end(body: string) {
      expect(Buffer.byteLength(body)).toBe(declaredLength);
      captured.body = JSON.parse(body);
      return response;
    },
    destroy() {
      captured.destroyed = true;
    },
  };
  const request = {
    method: 'POST',
    route: { path: '/plants' },
    headers: requestId ? { 'x-request-id': requestId } : {},
  };
  return {
    switchToHttp: () => ({
      getRequest: () => request,
      getResponse: () => response,
    }),
  } as unknown as ArgumentsHost;
}

function answerTo(
  exception: unknown,
  options?: Parameters<typeof hostFor>[1],
): Captured {
  const captured: Captured = { headers: {}, destroyed: false };
  new ApiExceptionFilter().catch(exception, hostFor(captured, options));
  return captured;
}

describe('ApiExceptionFilter', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [
      'a refused connection',
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    ],
    [
      'a TypeORM error wrapping a statement timeout',
      Object.assign(new Error('query failed'), {
        driverError: Object.assign(new Error('x'), { code: '57014' }),
      }),
    ],
  ])(
    'answers a database that cannot answer (%s) with 503 and Retry-After, whoever met it',
    (_case, error) => {
      const loggedError = vi
        .spyOn(Logger.prototype, 'error')
        .mockImplementation(() => {});
      expect(answerTo(error)).toEqual({
        status: 503,
        headers: { 'Retry-After': '2' },
        body: {
          error: 503,
          message: 'The database is unavailable; retry later.',
        },
        destroyed: false,
      });
      expect(loggedError).not.toHaveBeenCalled();
    },
  );

  it('answers an ApiError with its status, message and headers', () => {
    expect(answerTo(ApiError.methodNotAllowed(['POST']))).toEqual({
      status: 405,
      headers: { Allow: 'POST' },
      body: { error: 405, message: 'This method is not allowed on this path.' },
      destroyed: false,
    });
    expect(answerTo(ApiError.conflict('Taken.')).body).toEqual({
      error: 409,
      message: 'Taken.',
    });
  });

  it("keeps the status of Nest's own exceptions but not their text, which may echo the path", () => {
    expect(
      answerTo(new NotFoundException('Cannot GET /secret-path')).body,
    ).toEqual({
      error: 404,
      message: 'No resource exists at this path.',
    });
    expect(
      answerTo(new BadRequestException({ message: ['raw detail'] })).body,
    ).toEqual({
      error: 400,
      message: 'The request is invalid.',
    });
  });

  it('keeps the 4xx status of errors from Express and body-parser', () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      type: 'entity.too.large',
    });
    const aborted = Object.assign(new Error('request aborted'), {
      statusCode: 400,
    });
    expect(answerTo(tooLarge).body).toEqual({
      error: 413,
      message: 'The request body is larger than allowed.',
    });
    expect(answerTo(aborted).body).toEqual({
      error: 400,
      message: 'The request is invalid.',
    });
  });

  it('answers anything else with a generic 500, logging the stack with the request id', () => {
    const log = vi
      .spyOn(Logger.prototype, 'error')
      .mockImplementation(() => undefined);
    const answer = answerTo(
      new Error('duplicate key value violates constraint "plants_pkey"'),
      {
        requestId: 'req-123',
      },
    );

    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      error: 500,
      message: 'The server failed to handle the request; it has been logged.',
    });
    expect(answer.headers).toEqual({ 'X-Request-Id': 'req-123' });
    expect(log).toHaveBeenCalledWith(
      expect.stringContaining('[request req-123]'),
      expect.stringContaining('plants_pkey'),
    );
  });

  it('keeps a 5xx status thrown on purpose, with the catalogue message', () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    expect(
      answerTo(new ServiceUnavailableException('pool drained')).body,
    ).toEqual({
      error: 503,
      message: 'The service is temporarily unavailable; retry later.',
    });
  });

  it('makes up a request id when the given one is not sane', () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const answer = answerTo('a thrown string', {
      requestId: 'bad id\r\nInjected: header',
    });
    expect(answer.headers['X-Request-Id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('cuts the connection when the answer has already begun', () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const answer = answerTo(new Error('late failure'), { headersSent: true });
    expect(answer).toEqual({ headers: {}, destroyed: true });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 413],
    ['a string', 'failed'],
  ])('answers %s thrown with a generic 500', (_case, thrown) => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    expect(answerTo(thrown)).toMatchObject({
      status: 500,
      body: {
        error: 500,
        message: 'The server failed to handle the request; it has been logged.',
      },
    });
  });

  it.each([
    ['a 5xx status', { status: 500 }],
    ['a status below 400', { status: 302 }],
    ['a statusCode of 500', { statusCode: 500 }],
    ['a status written as text', { status: '413' }],
  ])(
    'answers an error carrying %s with a generic 500, logged with the ApiExceptionFilter context',
    (_case, fields) => {
      const log = vi
        .spyOn(Logger.prototype, 'error')
        .mockImplementation(() => undefined);
      const answer = answerTo(Object.assign(new Error('x'), fields));
      expect(answer.status).toBe(500);
      expect(log).toHaveBeenCalledTimes(1);
      expect((log.mock.contexts[0] as { context?: string }).context).toBe(
        'ApiExceptionFilter',
      );
    },
  );

  it('keeps a 4xx statusCode when status is not a number, logging nothing', () => {
    const log = vi.spyOn(Logger.prototype, 'error');
    expect(
      answerTo(
        Object.assign(new Error('x'), { status: 'bad', statusCode: 415 }),
      ).body,
    ).toEqual({
      error: 415,
      message:
        'The request body must be sent with Content-Type: application/json.',
    });
    expect(log).not.toHaveBeenCalled();
  });

  it("answers Nest's own 5xx exceptions as unexpected: logged, with the request id", () => {
    const log = vi
      .spyOn(Logger.prototype, 'error')
      .mockImplementation(() => undefined);
    const answer = answerTo(new InternalServerErrorException('detail'), {
      requestId: 'req-5',
    });
    expect(answer).toEqual({
      status: 500,
      headers: { 'X-Request-Id': 'req-5' },
      body: {
        error: 500,
        message: 'The server failed to handle the request; it has been logged.',
      },
      destroyed: false,
    });
    expect(log).toHaveBeenCalledWith(
      'Unexpected error on POST /plants [request req-5]',
      expect.stringContaining('detail'),
    );
  });

  it("answers Nest's own 4xx exceptions without logging", () => {
    const log = vi.spyOn(Logger.prototype, 'error');
    expect(answerTo(new NotFoundException()).status).toBe(404);
    expect(answerTo(new BadRequestException()).headers).toEqual({});
    expect(log).not.toHaveBeenCalled();
  });
});

describe("ApiExceptionFilter on Fastify's reply", () => {
  function fastifyHost(sent: {
    status?: number;
    headers?: object;
    body?: string;
    rawWritten: boolean;
    headersSent?: boolean;
  }): ArgumentsHost {
    const raw = {
      headersSent: sent.headersSent ?? false,
      writeHead: () => {
        sent.rawWritten = true;
      },
      end: () => {
        sent.rawWritten = true;
      },
      destroy: () => {
        sent.rawWritten = true;
      },
    };
    const reply = {
      raw,
      code(status: number) {
        sent.status = status;
        return reply;
      },
      headers(headers: object) {
        sent.headers = headers;
        return reply;
      },
      send(body: string) {
        sent.body = body;
        return reply;
      },
    };
    const request = {
      method: 'POST',
      routeOptions: { url: '/plants' },
      raw: { headers: { 'x-request-id': 'fastify-1' } },
      headers: { 'x-request-id': 'fastify-1' },
    };
    return {
      switchToHttp: () => ({
        getRequest: () => request,
        getResponse: () => reply,
      }),
    } as unknown as ArgumentsHost;
  }

  it('sends the Error answer through the reply, with its status, headers and body', () => {
    const sent: Parameters<typeof fastifyHost>[0] = { rawWritten: false };
    new ApiExceptionFilter().catch(
      ApiError.methodNotAllowed(['POST']),
      fastifyHost(sent),
    );
    expect(sent.status).toBe(405);
    expect(sent.headers).toMatchObject({
      Allow: 'POST',
      'Content-Type': 'application/json; charset=utf-8',
    });
    expect(JSON.parse(sent.body ?? '')).toEqual({
      error: 405,
      message: 'This method is not allowed on this path.',
    });
    expect(sent.rawWritten).toBe(false);
  });

  it('cuts the connection when the answer has already begun, sending nothing', () => {
    const sent: Parameters<typeof fastifyHost>[0] = {
      rawWritten: false,
      headersSent: true,
    };
    new ApiExceptionFilter().catch(ApiError.conflict('x'), fastifyHost(sent));
    expect(sent.status).toBeUndefined();
    expect(sent.rawWritten).toBe(true);
  });

  it("logs an unexpected error with the id Fastify's request carries, and the route it matched", () => {
    const logged = vi
      .spyOn(Logger.prototype, 'error')
      .mockImplementation(() => {});
    const sent: Parameters<typeof fastifyHost>[0] = { rawWritten: false };
    new ApiExceptionFilter().catch(new Error('boom'), fastifyHost(sent));
    expect(sent.status).toBe(500);
    expect(sent.headers).toMatchObject({ 'X-Request-Id': 'fastify-1' });
    expect(logged.mock.calls[0]?.[0]).toBe(
      'Unexpected error on POST /plants [request fastify-1]',
    );
    logged.mockRestore();
  });
});
