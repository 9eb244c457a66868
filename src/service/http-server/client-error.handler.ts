import type { Duplex } from 'node:stream';
import { HttpStatus } from '@nestjs/common';
import { ErrorAnswer } from '../../lib/errors/error-answer.js';

const REQUEST_HEADER_FIELDS_TOO_LARGE = 431;

const STATUS_BY_PARSER_ERROR: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: REQUEST_HEADER_FIELDS_TOO_LARGE,
  ERR_HTTP_REQUEST_TIMEOUT: HttpStatus.REQUEST_TIMEOUT,
};

/**
 * Requests Node's HTTP parser rejects (an unknown method, a broken request line, headers
 * too large) never reach Express. Node's default answer has no body; this one gives them
 * the same Error body as every other failure, then closes the connection.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    STATUS_BY_PARSER_ERROR[error.code ?? ''] ?? HttpStatus.BAD_REQUEST;
  socket.end(ErrorAnswer.forStatus(status, 'close').toRawResponse());
}
