import type { IncomingMessage, ServerResponse } from 'node:http';

const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * Node answers `Expect: 100-continue` with `100 Continue` as soon as the headers arrive,
 * before authentication, so a client would upload its body only to be told 401. With a
 * 'checkContinue' listener Node leaves that to us: the request is marked here and handled
 * as any other, and the body reader sends `100 Continue` once the token and headers are
 * accepted. An answer sent without it closes the connection (Node does so when 100 was
 * never sent).
 */
export function holdContinue(request: IncomingMessage): void {
  awaitingContinue.add(request);
}

/** Tells a client waiting on `Expect: 100-continue` to send its body, once. */
export function continueIfAwaited(
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if (awaitingContinue.delete(request) && !response.headersSent) {
    response.writeContinue();
  }
}
