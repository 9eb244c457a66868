import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import {
  forTheService,
  REQUEST_ID_HEADER,
  requestIdOf,
  routeLabel,
} from '../../lib/index.js';
import { inActiveSpan } from '../tracing/log-trace-ids.js';

const { nodeRequestOf } = forTheService;

type RequestLogLevel = 'info' | 'warn' | 'error';

/** The request as the adapter's hook has it: Express's is Node's; Fastify's has it as `raw`. */
export type FollowedRequest =
  IncomingMessage | { readonly raw: IncomingMessage; readonly method: string };

/** The answer as the adapter's hook has it: Express's is Node's; Fastify's reply has it as `raw`. */
export type FollowedReply =
  | ServerResponse
  | {
      readonly raw: ServerResponse;
      header(name: string, value: string): unknown;
    };

/** A 503 is the database being away, answered as designed: a warning, not an error. */
export function requestLogLevel(statusCode: number): RequestLogLevel {
  if (statusCode === 500) return 'error';
  return statusCode >= 500 ? 'warn' : 'info';
}

/**
 * One JSON line per request once answered or abandoned, not pino-http's child logger
 * (docs/performance.md#what-bought-the-most-and-where-it-is-measured).
 */
@Injectable()
export class RequestLog {
  constructor(private readonly logger: PinoLogger) {}

  /** Called by the front door as a request arrives. */
  follow(request: FollowedRequest, reply: FollowedReply): void {
    const id = requestIdOf(request);
    // On Fastify's reply: it goes out with Fastify's headers in one writeHead.
    if ('raw' in reply) reply.header(REQUEST_ID_HEADER, id);
    else reply.setHeader(REQUEST_ID_HEADER, id);
    const response = 'raw' in reply ? reply.raw : reply;
    const started = Date.now();
    // 'close' follows 'finish' on every answer, and comes alone when the client went first.
    // It comes once: `on` spares the wrapper `once` allocates per request. Alone, it comes
    // outside the request's trace; bound to it, its line still carries the trace's ids.
    response.on(
      'close',
      inActiveSpan(() => this.write(request, response, started)),
    );
  }

  private write(
    request: FollowedRequest,
    response: ServerResponse,
    started: number,
  ): void {
    const { statusCode } = response;
    this.logger[requestLogLevel(statusCode)](
      {
        req: nodeRequestOf(request),
        res: response,
        responseTime: Date.now() - started,
        route: routeLabel(request),
      },
      statusCode >= 500 ? 'request errored' : 'request completed',
    );
  }
}
