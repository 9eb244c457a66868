import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// Accept a caller's id only if it cannot smuggle anything into a log line or a header.
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

const assigned = new WeakMap<IncomingMessage, string>();

/** The id that ties a request to its log lines: the caller's if it is sane, else a new one. */
export function requestIdOf(request: IncomingMessage): string {
  let id = assigned.get(request);
  if (id === undefined) {
    const given = request.headers[REQUEST_ID_HEADER.toLowerCase()];
    id =
      typeof given === 'string' && SANE_REQUEST_ID.test(given)
        ? given
        : randomUUID();
    assigned.set(request, id);
  }
  return id;
}
