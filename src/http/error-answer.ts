import type { ServerResponse } from 'node:http';
import type { ApiError } from '../errors/api-error.js';
import { ErrorBody } from '../errors/error-body.dto.js';

/**
 * What becomes of the connection after the answer: 'close' when the request may carry a
 * body nobody will read (a client declaring a gigabyte would otherwise hold it), 'keep'
 * when the caller has the body read and discarded (a small one), so that the client does
 * not pay, nor make the service pay, a new connection for its next request.
 */
export type ConnectionAfterAnswer = 'close' | 'keep';

/**
 * An ApiError answered before Express sees the request (protocol checks that Node would
 * otherwise answer with an empty body, load shedding that must cost less than a create),
 * with its status, Error body and headers (Retry-After, ...) as the filter would send them.
 */
export function writeErrorAnswer(
  response: ServerResponse,
  error: ApiError,
  connection: ConnectionAfterAnswer = 'close',
): void {
  const status = error.getStatus();
  const body = JSON.stringify(new ErrorBody(status, error.message));
  response.writeHead(status, {
    ...error.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    ...(connection === 'close' ? { Connection: 'close' } : {}),
  });
  response.end(body);
}
