import type { IncomingMessage, ServerResponse } from 'node:http';

const awaitingContinue = new WeakSet<IncomingMessage>();

/** Held: the body reader sends `100 Continue` once the token and headers are accepted, not Node at once. */
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
