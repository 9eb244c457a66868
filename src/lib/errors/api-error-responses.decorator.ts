import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { DEFAULT_MESSAGES } from './api-error.js';
import { ErrorBody } from './error-body.dto.js';

interface HeaderDocument {
  description: string;
  schema: { type: 'integer' | 'string' };
}

const RETRY_AFTER: Record<string, HeaderDocument> = {
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    schema: { type: 'integer' },
  },
};

const HEADERS_BY_STATUS: Partial<
  Record<number, Record<string, HeaderDocument>>
> = {
  [HttpStatus.UNAUTHORIZED]: {
    'WWW-Authenticate': {
      description:
        'Bearer realm="plant-store", with error="invalid_token" when a token was sent',
      schema: { type: 'string' },
    },
  },
  [HttpStatus.TOO_MANY_REQUESTS]: RETRY_AFTER,
  [HttpStatus.SERVICE_UNAVAILABLE]: RETRY_AFTER,
};

/** Documents an operation's Error answers: per status the catalogue's sentence and its headers. */
export function ApiErrorResponses(...statuses: HttpStatus[]): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorBody),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DEFAULT_MESSAGES[status],
        type: ErrorBody,
        example: ErrorBody.forStatus(status),
        headers: HEADERS_BY_STATUS[status],
      }),
    ),
  );
}
