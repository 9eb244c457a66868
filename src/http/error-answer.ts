import type { ServerResponse } from 'node:http';
import type { ApiError } from '../errors/api-error.js';
import { ErrorBody } from '../errors/error-body.dto.js';

/**
 * An ApiError answered before Express sees the request (protocol checks that Node would
 * otherwise answer with an empty body, load shedding that must cost less than a create),
 * with its status, Error body and headers (Retry-After, ...) as the filter would send them.
 * The connection closes: a request refused at this level may carry a body nobody will read.
 */
export function writeErrorAnswer(
  response: ServerResponse,
  error: ApiError,
): void {
  const status = error.getStatus();
  const body = JSON.stringify(new ErrorBody(status, error.message));
  response.writeHead(status, {
    ...error.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
