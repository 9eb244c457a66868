import { HttpException, HttpStatus } from '@nestjs/common';

/** The error catalogue: each status's client-safe sentence (never input, stacks or driver text). */
export const DEFAULT_MESSAGES: Readonly<Record<number, string>> = {
  [HttpStatus.BAD_REQUEST]: 'The request is invalid.',
  [HttpStatus.UNAUTHORIZED]:
    'A valid bearer token is required in the Authorization header.',
  [HttpStatus.FORBIDDEN]: 'The token does not allow this request.',
  [HttpStatus.NOT_FOUND]: 'No resource exists at this path.',
  [HttpStatus.METHOD_NOT_ALLOWED]: 'This method is not allowed on this path.',
  [HttpStatus.REQUEST_TIMEOUT]: 'The request took too long to arrive.',
  [HttpStatus.CONFLICT]: 'The request conflicts with the stored state.',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'The request body is larger than allowed.',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]:
    'The request body must be sent with Content-Type: application/json.',
  [HttpStatus.TOO_MANY_REQUESTS]: 'Too many requests; retry later.',
  431: 'The request headers are too large.',
  [HttpStatus.INTERNAL_SERVER_ERROR]:
    'The server failed to handle the request; it has been logged.',
  [HttpStatus.NOT_IMPLEMENTED]: 'This method is not supported by this service.',
  [HttpStatus.SERVICE_UNAVAILABLE]:
    'The service is temporarily unavailable; retry later.',
};

export function defaultMessage(status: number): string {
  return (
    DEFAULT_MESSAGES[status] ??
    (status >= 500
      ? DEFAULT_MESSAGES[HttpStatus.INTERNAL_SERVER_ERROR]
      : DEFAULT_MESSAGES[HttpStatus.BAD_REQUEST])
  );
}

/** Not in RFC 9110: nginx's status for a request whose client went away. */
export const CLIENT_CLOSED_REQUEST = 499;

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 2;

/** What a read-only path allows: HEAD is answered wherever GET is. */
export const READ_METHODS: readonly string[] = ['GET', 'HEAD'];

/** An expected failure: status, client-safe message, and headers the status calls for. */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus,
    message: string = defaultMessage(status),
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message, status);
  }

  static badRequest(message: string): ApiError {
    return new ApiError(HttpStatus.BAD_REQUEST, message);
  }

  /** A body that is JSON but not an object: the contract's bodies are all objects. */
  static notAJsonObject(): ApiError {
    return ApiError.badRequest('The request body must be a JSON object.');
  }

  static unauthorized(challenge: string): ApiError {
    return new ApiError(HttpStatus.UNAUTHORIZED, undefined, {
      'WWW-Authenticate': challenge,
    });
  }

  static methodNotAllowed(allowed: readonly string[]): ApiError {
    return new ApiError(HttpStatus.METHOD_NOT_ALLOWED, undefined, {
      Allow: allowed.join(', '),
    });
  }

  static conflict(message: string): ApiError {
    return new ApiError(HttpStatus.CONFLICT, message);
  }

  static payloadTooLarge(limit: string): ApiError {
    return new ApiError(
      HttpStatus.PAYLOAD_TOO_LARGE,
      `The request body is larger than the limit of ${limit}.`,
    );
  }

  static unsupportedMediaType(): ApiError {
    return new ApiError(HttpStatus.UNSUPPORTED_MEDIA_TYPE);
  }

  static tooManyRequests(retryAfterSeconds: number): ApiError {
    return new ApiError(HttpStatus.TOO_MANY_REQUESTS, undefined, {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    });
  }

  static unsupportedContentEncoding(): ApiError {
    return new ApiError(
      HttpStatus.UNSUPPORTED_MEDIA_TYPE,
      'The request body must not be compressed: Content-Encoding is not supported.',
    );
  }

  /** 503 with Retry-After: the service cannot answer now, and says when to try again. */
  static serviceUnavailable(message: string): ApiError {
    return new ApiError(HttpStatus.SERVICE_UNAVAILABLE, message, {
      'Retry-After': String(RETRY_AFTER_SECONDS),
    });
  }

  /** For the logs and metrics only: nobody is left to read it (nginx's 499). */
  static clientGone(): ApiError {
    return new ApiError(
      CLIENT_CLOSED_REQUEST as HttpStatus,
      'The client closed the connection before its request was handled.',
    );
  }

  /** Load shedding: more creates are waiting than the service lets queue up. */
  static overloaded(): ApiError {
    return ApiError.serviceUnavailable(
      'The service is overloaded; retry later.',
    );
  }

  static databaseUnavailable(): ApiError {
    return ApiError.serviceUnavailable(
      'The database is unavailable; retry later.',
    );
  }
}
