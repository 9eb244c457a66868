import type { Socket } from 'node:net';
import { HttpStatus } from '@nestjs/common';
import { ErrorAnswer } from '../../lib/index.js';
import { isLingering, lingeringClose } from './lingering-close.js';

const REQUEST_HEADER_FIELDS_TOO_LARGE = 431;

const STATUS_BY_PARSER_ERROR: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: REQUEST_HEADER_FIELDS_TOO_LARGE,
  ERR_HTTP_REQUEST_TIMEOUT: HttpStatus.REQUEST_TIMEOUT,
};

/** Requests Node's parser rejects get the same Error body as any failure, then a lingering close. */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Socket,
): void {
  // Closing already, within its bounds: a later parser error or timeout adds nothing.
  if (isLingering(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    STATUS_BY_PARSER_ERROR[error.code ?? ''] ?? HttpStatus.BAD_REQUEST;
  socket.write(ErrorAnswer.forStatus(status, 'close').toRawResponse());
  lingeringClose(socket);
}
