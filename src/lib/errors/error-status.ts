import { HttpException, HttpStatus } from '@nestjs/common';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { ApiError, defaultMessage } from './api-error.js';

/** Errors raised by Express and body-parser carry their status (http-errors). */
export function clientErrorStatusOf(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null) return undefined;
  const { status, statusCode } = exception as Record<string, unknown>;
  const code = typeof status === 'number' ? status : statusCode;
  return typeof code === 'number' && code >= 400 && code < 500
    ? code
    : undefined;
}

/** A failure's status and client-safe sentence as ApiExceptionFilter decides it, for a trace. */
export function errorAnswerOf(exception: unknown): {
  status: number;
  message: string;
} {
  const known = isDatabaseUnavailable(exception)
    ? ApiError.databaseUnavailable()
    : exception;
  if (known instanceof ApiError)
    return { status: known.getStatus(), message: known.message };
  const status =
    exception instanceof HttpException
      ? exception.getStatus()
      : (clientErrorStatusOf(exception) ?? HttpStatus.INTERNAL_SERVER_ERROR);
  return { status, message: defaultMessage(status) };
}
