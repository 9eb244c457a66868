import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { DEFAULT_MESSAGES } from './api-error.js';
import { ErrorBody } from './error-body.dto.js';

const HEADERS_BY_STATUS: Partial<
  Record<
    number,
    Record<string, { description: string; schema: { type: 'string' } }>
  >
> = {
  [HttpStatus.UNAUTHORIZED]: {
    'WWW-Authenticate': {
      description:
        'Bearer realm="plant-store", with error="invalid_token" when a token was sent',
      schema: { type: 'string' },
    },
  },
  [HttpStatus.SERVICE_UNAVAILABLE]: {
    'Retry-After': {
      description: 'Seconds to wait before retrying',
      schema: { type: 'string' },
    },
  },
};

/** Documents the Error answers an operation can give, with the catalogue's sentences. */
export function ApiErrorResponses(...statuses: HttpStatus[]): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorBody),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DEFAULT_MESSAGES[status],
        type: ErrorBody,
        headers: HEADERS_BY_STATUS[status],
      }),
    ),
  );
}
