import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { nodeRequestOf } from './node-http.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// Accept a caller's id only if it cannot smuggle anything into a log line or a header.
const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

const REQUEST_ID_KEY = REQUEST_ID_HEADER.toLowerCase();
// Kept on the request itself: a WeakMap entry per request is extra work for every
// garbage collection while the request lives.
const assigned = Symbol('request id');

type IdentifiedRequest = IncomingMessage & { [assigned]?: string };

/** The caller's request id if sane, else a new one, kept on Node's request for both adapters. */
export function requestIdOf(
  from: IncomingMessage | { raw: IncomingMessage },
): string {
  const request: IdentifiedRequest = nodeRequestOf(from);
  let id = request[assigned];
  if (id === undefined) {
    const given = request.headers[REQUEST_ID_KEY];
    id =
      typeof given === 'string' && SANE_REQUEST_ID.test(given)
        ? given
        : randomUUID();
    request[assigned] = id;
  }
  return id;
}
