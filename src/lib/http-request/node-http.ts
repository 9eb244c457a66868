import type { IncomingMessage, ServerResponse } from 'node:http';

/** Node's request whichever adapter: Express's is Node's own, Fastify's wrapper keeps it as `raw`. */
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
