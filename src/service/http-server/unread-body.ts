import type { IncomingMessage, ServerResponse } from 'node:http';
import { declaresBody } from '../../lib/request-body/request-body.js';

/**
 * An answer sent before its request's body has arrived (401, 413, 415, ...) closes the
 * connection. Node would otherwise keep the connection and read the rest of the body to
 * find the next request: a client declaring a gigabyte, or trickling one, would hold the
 * connection and cost the bandwidth for as long as the request timeout allows.
 */
// Set on a request whose body is being read and dropped: its connection can carry the next
// one. A property, not a WeakSet: an entry in a WeakSet per refusal cost a twentieth of a
// refusal's CPU under overload (bench/RESULTS.md, issue 32).
const DISCARDING = Symbol('discarding');
type DiscardedRequest = IncomingMessage & { [DISCARDING]?: true };

/**
 * Reads and drops the request's body, so that an answer sent before it arrived keeps the
 * connection (load shedding's refusal of a small body: a reconnect would cost more).
 */
export function discardBody(request: IncomingMessage): void {
  (request as DiscardedRequest)[DISCARDING] = true;
  request.resume();
}

function closeIfBodyUnread(
  this: ServerResponse,
  ...args: Parameters<ServerResponse['writeHead']>
): ServerResponse {
  if (
    !this.req.complete &&
    !this.headersSent &&
    (this.req as DiscardedRequest)[DISCARDING] !== true
  ) {
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
