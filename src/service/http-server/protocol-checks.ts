import {
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../../lib/errors/api-error.js';
import { ErrorAnswer } from '../../lib/errors/error-answer.js';
import { holdContinue } from '../../lib/request-body/expect-continue.js';
import { closeConnectionIfBodyUnread } from './unread-body.js';

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

function refuseWithoutHost(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (!lacksHost(request)) return false;
  WITHOUT_HOST.writeTo(response);
  return true;
}

/**
 * The checks Node makes itself before a request reaches Express (a Host header, the
 * Expect header), made here so that their answers carry the Error body: Node's own have
 * none. The server is created with requireHostHeader: false for this.
 */
export function withProtocolChecks(app: RequestListener): RequestListener {
  return (request, response) => {
    if (refuseWithoutHost(request, response)) return;
    closeConnectionIfBodyUnread(request, response);
    app(request, response);
  };
}

/**
 * `Expect: 100-continue` is handled like any request, `100 Continue` sent only once the
 * body is about to be read (see expect-continue.ts); any other expectation gets 417.
 */
export function answerExpectations(server: Server): void {
  server.on('checkContinue', (request, response) => {
    holdContinue(request);
    // Through 'request', so every listener of it sees this request too (the shutdown's
    // count of requests in flight, for one).
    server.emit('request', request, response);
  });
  server.on('checkExpectation', (request, response) => {
    if (refuseWithoutHost(request, response)) return;
    UNSUPPORTED_EXPECTATION.writeTo(response);
  });
}
