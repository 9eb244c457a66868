import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
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
 * Built once and written as often as needed: under overload the same refusal goes out
 * thousands of times a second, and building its HttpException each time (a captured
 * stack) was a fifth of a refusal's cost in a CPU profile.
 */
export class ErrorAnswer {
  private readonly status: number;
  private readonly headers: OutgoingHttpHeaders;
  // A string, not a Buffer: Node then writes the head and the body in one call.
  private readonly body: string;

  constructor(error: ApiError, connection: ConnectionAfterAnswer = 'close') {
    this.status = error.getStatus();
    this.body = JSON.stringify(new ErrorBody(this.status, error.message));
    this.headers = {
      ...error.headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(this.body),
      ...(connection === 'close' ? { Connection: 'close' } : {}),
    };
  }

  writeTo(response: ServerResponse): void {
    response.writeHead(this.status, this.headers);
    response.end(this.body);
  }
}

/** A one-off ErrorAnswer. */
export function writeErrorAnswer(
  response: ServerResponse,
  error: ApiError,
  connection: ConnectionAfterAnswer = 'close',
): void {
  new ErrorAnswer(error, connection).writeTo(response);
}
