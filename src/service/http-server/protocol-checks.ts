import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpStatus, RequestMethod } from '@nestjs/common';
import { ApiError, ErrorAnswer, forTheService } from '../../lib/index.js';

const { NAMED_METHODS } = forTheService;

/** RFC 9112 section 3.2: an HTTP/1.1 request without Host gets 400. */
function lacksHost(request: IncomingMessage): boolean {
  return request.httpVersion === '1.1' && request.headers.host === undefined;
}

// Answered before the body is read, so the connection closes (the body may never end).
const WITHOUT_HOST = ErrorAnswer.of(
  ApiError.badRequest('An HTTP/1.1 request must carry a Host header.'),
  'close',
);
const UNSUPPORTED_EXPECTATION = ErrorAnswer.of(
  new ApiError(
    HttpStatus.EXPECTATION_FAILED,
    'Only the expectation 100-continue is supported.',
  ),
  'close',
);

// What Nest can route a request by: the methods it names, as they arrive.
const ROUTABLE_METHODS: ReadonlySet<string> = new Set(
  NAMED_METHODS.map((method) => RequestMethod[method]),
);
const UNKNOWN_METHOD = ErrorAnswer.forStatus(HttpStatus.NOT_IMPLEMENTED);

/**
 * The checks Node would make itself before a request reaches the adapter, made here so that
 * their answers carry the Error body (Node's own have none; the server is created with
 * requireHostHeader: false for this). The front door (front-door.ts) calls them.
 */
export function refuseWithoutHost(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (!lacksHost(request)) return false;
  WITHOUT_HOST.writeTo(response);
  return true;
}

/**
 * `Expect: 100-continue` is taken like any request, `100 Continue` sent only once the body
 * is about to be read (expect-continue.ts, holdContinue); any other expectation gets 417.
 */
export function refuseExpectation(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if (refuseWithoutHost(request, response)) return;
  UNSUPPORTED_EXPECTATION.writeTo(response);
}

/**
 * A method Node parses but no Nest route can have (TRACE, CONNECT, PURGE...) is one this
 * service supports on no path: 501 (RFC 9110, 15.6.2), with the Error body. A method Nest
 * routes but a path does not serve is that path's 405, from its controller.
 */
export function refuseUnknownMethod(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (ROUTABLE_METHODS.has(request.method ?? '')) return false;
  UNKNOWN_METHOD.writeTo(response);
  return true;
}
