import type { IncomingMessage, ServerResponse } from 'node:http';
import { forTheService } from '../../lib/index.js';
import { lingerAfterEarlyAnswer, lingerIfClosed } from './lingering-close.js';

const { declaredLength, declaresBody } = forTheService;

/**
 * The rule for an answer sent before its request's body has arrived (401, 413, 415, a
 * refusal...), put on every request that declares a body, whichever step answers it:
 * - a body declared and small (at most `smallBodyBytes`) is read and dropped, and the
 *   connection carries the client's next request: a reconnect would cost more;
 * - any other (chunked, larger, or awaiting `100 Continue`, which may never come) closes
 *   the connection with a lingering close (lingering-close.ts), so that the client reads
 *   its answer, and a client declaring a gigabyte, or trickling one, cannot hold it.
 */
export function earlyAnswerRule(
  smallBodyBytes: number,
): (request: IncomingMessage, response: ServerResponse) => void {
  const isSmall = (request: IncomingMessage): boolean =>
    request.headers['transfer-encoding'] === undefined &&
    request.headers.expect === undefined &&
    (declaredLength(request) ?? 0) <= smallBodyBytes;

  function writeHeadAfterRule(
    this: ServerResponse,
    ...args: Parameters<ServerResponse['writeHead']>
  ): ServerResponse {
    const request = this.req;
    if (!request.complete && !this.headersSent) {
      if (isSmall(request)) {
        // Read and dropped: the connection can carry the client's next request.
        request.resume();
        lingerIfClosed(request);
      } else {
        this.setHeader('Connection', 'close');
        lingerAfterEarlyAnswer(request);
      }
    }
    const prototype = Object.getPrototypeOf(this) as ServerResponse;
    return prototype.writeHead.apply(this, args);
  }

  return (request, response) => {
    // Express swaps the response's prototype, so the hook is an own property.
    if (declaresBody(request))
      response.writeHead = writeHeadAfterRule as ServerResponse['writeHead'];
  };
}
