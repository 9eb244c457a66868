import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, READ_METHODS } from '../../lib/errors/api-error.js';
import { ErrorAnswer } from '../../lib/errors/error-answer.js';

const OTHER_METHOD = ErrorAnswer.of(ApiError.methodNotAllowed(READ_METHODS));

/**
 * For a path served outside Nest's routing (the metrics port, Swagger's routes): a method
 * other than GET or HEAD is answered 405 with Allow (RFC 9110, 15.5.6), as on the service's
 * own routes. True when it answered.
 */
export function refusedOtherThanRead(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (READ_METHODS.includes(request.method ?? '')) return false;
  OTHER_METHOD.writeTo(response);
  return true;
}
