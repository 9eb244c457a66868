import { ApiError, defaultMessage } from './api-error.js';
import { ErrorAnswer } from './error-answer.js';

describe('ErrorAnswer', () => {
  it('writes the whole HTTP/1.1 answer for a socket: status line, headers, the Error body', () => {
    expect(ErrorAnswer.of(ApiError.overloaded(), 'close').toRawResponse()).toBe(
      'HTTP/1.1 503 Service Unavailable\r\n' +
        'Retry-After: 2\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        'Content-Length: 65\r\n' +
        'Connection: close\r\n' +
        '\r\n' +
        '{"error":503,"message":"The service is overloaded; retry later."}',
    );
  });

  it('keeps the connection unless told to close it', () => {
    expect(ErrorAnswer.forStatus(404).headers).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': 58,
    });
    expect(ErrorAnswer.forStatus(404, 'close').headers).toMatchObject({
      Connection: 'close',
    });
  });

  it('gives a status without a reason phrase an empty one', () => {
    expect(ErrorAnswer.forStatus(499).toRawResponse()).toMatch(
      /^HTTP\/1\.1 499 \r\n/,
    );
  });
});

describe('the error catalogue', () => {
  it.each([
    [
      429,
      () => ApiError.tooManyRequests(0.2),
      'Too many requests; retry later.',
      { 'Retry-After': '1' },
    ],
    [
      429,
      () => ApiError.tooManyRequests(2.5),
      'Too many requests; retry later.',
      { 'Retry-After': '3' },
    ],
    [
      405,
      () => ApiError.methodNotAllowed(['GET', 'POST']),
      'This method is not allowed on this path.',
      { Allow: 'GET, POST' },
    ],
    [
      499,
      () => ApiError.clientGone(),
      'The client closed the connection before its request was handled.',
      {},
    ],
  ])(
    '%#: answers %i with its sentence and headers',
    (status, make, message, headers) => {
      // Built in the test, not in the table: Stryker counts what a table builds as no test's.
      const error = make();
      expect({
        status: error.getStatus(),
        message: error.message,
        headers: error.headers,
      }).toEqual({ status, message, headers });
    },
  );
});

describe("the catalogue's sentence for a status", () => {
  it.each([
    [403, 'The token does not allow this request.'],
    [408, 'The request took too long to arrive.'],
    [409, 'The request conflicts with the stored state.'],
    [431, 'The request headers are too large.'],
    [418, 'The request is invalid.'],
    [499, 'The request is invalid.'],
    [501, 'This method is not supported by this service.'],
    [502, 'The server failed to handle the request; it has been logged.'],
    [599, 'The server failed to handle the request; it has been logged.'],
  ])('%i: %s', (status, message) => {
    expect(defaultMessage(status)).toBe(message);
  });
});
