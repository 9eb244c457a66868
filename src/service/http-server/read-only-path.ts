import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ErrorAnswer, READ_METHODS } from '../../lib/index.js';

/** The answer to a method other than GET or HEAD on a read-only path. */
export const OTHER_THAN_READ = ErrorAnswer.of(
  ApiError.methodNotAllowed(READ_METHODS),
);

export function isReadMethod(method: string | undefined): boolean {
  return READ_METHODS.includes(method ?? '');
}

/**
 * For a path served outside Nest's routing (the metrics port, Swagger's routes): a method
 * other than GET or HEAD is answered 405 with Allow (RFC 9110, 15.5.6), as on the service's
 * own routes. True when it answered.
 */
export function refusedOtherThanRead(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (isReadMethod(request.method)) return false;
  OTHER_THAN_READ.writeTo(response);
  return true;
}
