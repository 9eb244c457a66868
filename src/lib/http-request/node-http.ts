import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The request and response objects Nest hands to guards, filters and handlers are the
 * adapter's: on Express, Node's own objects with Express's methods on them; on Fastify,
 * Fastify's wrappers, which keep Node's objects as `raw`. What reads the body stream,
 * writes an answer or marks the request works on Node's objects, whichever adapter the
 * application runs on.
 */
export function nodeRequestOf(
  request: IncomingMessage | { raw: IncomingMessage },
): IncomingMessage {
  return 'raw' in request ? request.raw : request;
}

export function nodeResponseOf(
  response: ServerResponse | { raw: ServerResponse },
): ServerResponse {
  return 'raw' in response ? response.raw : response;
}
