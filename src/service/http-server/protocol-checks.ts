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

/** Node's own Host check, made by the front door so the answer carries the Error body. */
export function refuseWithoutHost(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (!lacksHost(request)) return false;
  WITHOUT_HOST.writeTo(response);
  return true;
}

/** `Expect: 100-continue` is held (holdContinue); any other expectation gets 417. */
export function refuseExpectation(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if (refuseWithoutHost(request, response)) return;
  UNSUPPORTED_EXPECTATION.writeTo(response);
}

/** A method no Nest route can have (TRACE, CONNECT...): 501 with the Error body (RFC 9110, 15.6.2). */
export function refuseUnknownMethod(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (ROUTABLE_METHODS.has(request.method ?? '')) return false;
  UNKNOWN_METHOD.writeTo(response);
  return true;
}
