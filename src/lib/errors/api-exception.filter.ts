import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDatabaseUnavailable } from '../database/database-errors.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../http-request/request-id.js';
import { nodeResponseOf } from '../http-request/node-http.js';
import { routeLabel } from '../http-request/route-label.js';
import { ApiError, defaultMessage } from './api-error.js';
import { ErrorAnswer, type ReplyLike } from './error-answer.js';
import { clientErrorStatusOf } from './error-status.js';

/** Fastify's reply, around Node's response. */
type FastifyReplyLike = ReplyLike & { raw: ServerResponse };

/** Every failure's answer: expected ones keep theirs, a database away is 503, the rest a logged 500. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    // Express's request or Fastify's: each has `method`, and the request id and route label
    // read either.
    const request = http.getRequest<IncomingMessage>();
    const reply = http.getResponse<ServerResponse | FastifyReplyLike>();
    const answer = this.answerFor(exception, request);
    const response = nodeResponseOf(reply);

    if (response.headersSent) {
      // Too late for a proper answer: cut the connection rather than send half a body.
      response.destroy();
      return;
    }
    if ('raw' in reply) answer.sendThrough(reply);
    else answer.writeTo(response);
  }

  private answerFor(exception: unknown, request: IncomingMessage): ErrorAnswer {
    // The one place a database that cannot answer becomes 503 with Retry-After, whichever
    // layer met it (a create, a token look-up, a probe).
    const known = isDatabaseUnavailable(exception)
      ? ApiError.databaseUnavailable()
      : exception;
    if (known instanceof ApiError) return ErrorAnswer.of(known);
    // Nest's own exceptions (an unknown route, say) say things like "Cannot GET /x":
    // keep the status, use the catalogue's sentence.
    const status =
      exception instanceof HttpException
        ? exception.getStatus()
        : clientErrorStatusOf(exception);
    if (status !== undefined && status < 500) {
      return ErrorAnswer.forStatus(status);
    }
    return this.unexpected(exception, request, status);
  }

  private unexpected(
    exception: unknown,
    request: IncomingMessage,
    status: number = HttpStatus.INTERNAL_SERVER_ERROR,
  ): ErrorAnswer {
    const requestId = requestIdOf(request);
    this.logger.error(
      `Unexpected error on ${request.method} ${routeLabel(request)} [request ${requestId}]`,
      exception instanceof Error ? exception.stack : String(exception),
    );
    return new ErrorAnswer(status, defaultMessage(status), {
      [REQUEST_ID_HEADER]: requestId,
    });
  }
}
