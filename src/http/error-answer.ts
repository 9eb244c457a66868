import type { ServerResponse } from 'node:http';
import { defaultMessage } from '../errors/api-error.js';
import { ErrorBody } from '../errors/error-body.dto.js';

/**
 * The Error body for answers given before Express sees the request (protocol checks that
 * Node would otherwise answer with an empty body). The connection closes: a request
 * refused at this level may carry a body nobody will read.
 */
export function writeErrorAnswer(
  response: ServerResponse,
  status: number,
  message: string = defaultMessage(status),
): void {
  const body = JSON.stringify(new ErrorBody(status, message));
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
