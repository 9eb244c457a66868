import type { IncomingMessage, ServerResponse } from 'node:http';
import { declaresBody } from './request-body.js';

/**
 * An answer sent before its request's body has arrived (401, 413, 415, ...) closes the
 * connection. Node would otherwise keep the connection and read the rest of the body to
 * find the next request: a client declaring a gigabyte, or trickling one, would hold the
 * connection and cost the bandwidth for as long as the request timeout allows.
 */
function closeIfBodyUnread(
  this: ServerResponse,
  ...args: Parameters<ServerResponse['writeHead']>
): ServerResponse {
  if (!this.req.complete && !this.headersSent) {
    this.setHeader('Connection', 'close');
  }
  const prototype = Object.getPrototypeOf(this) as ServerResponse;
  return prototype.writeHead.apply(this, args);
}

export function closeConnectionIfBodyUnread(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  // Express swaps the response's prototype, so the hook is an own property.
  if (declaresBody(request)) {
    response.writeHead = closeIfBodyUnread as ServerResponse['writeHead'];
  }
}
