import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, ErrorAnswer, READ_METHODS } from '../../lib/index.js';

/** The answer to a method other than GET or HEAD on a read-only path. */
export const OTHER_THAN_READ = ErrorAnswer.of(
  ApiError.methodNotAllowed(READ_METHODS),
);

export function isReadMethod(method: string | undefined): boolean {
  return READ_METHODS.includes(method ?? '');
}

/** Outside Nest's routing: 405 with Allow for anything but GET or HEAD; true when it answered. */
export function refusedOtherThanRead(
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (isReadMethod(request.method)) return false;
  OTHER_THAN_READ.writeTo(response);
  return true;
}
