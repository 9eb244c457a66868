import type { IncomingMessage, ServerResponse } from 'node:http';
import { forTheService } from '../../lib/index.js';
import { lingerAfterEarlyAnswer, lingerIfClosed } from './lingering-close.js';

const { declaredLength, declaresBody } = forTheService;

/**
 * For an answer sent before the body arrived: a small declared body is read and dropped and
 * the connection kept; any other closes with a lingering close (lingering-close.ts).
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
