import type { RequestListener, Server } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { holdContinue } from '../lib/request-body/request-body.js';
import type { Environment } from './config/environment.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { CreateAdmission } from './load-shedding/create-admission.js';
import { RequestLogMiddleware } from './logging/request-log.middleware.js';
import { HttpMetricsMiddleware } from './http-metrics/http-metrics.middleware.js';
import { setupOpenApi } from './openapi/openapi.js';
import { answerClientError } from './http-server/client-error.handler.js';
import { capConnections } from './http-server/connection-cap.js';
import {
  refuseExpectation,
  refuseWithoutHost,
} from './http-server/protocol-checks.js';
import { SECURITY_HEADERS } from './http-server/security-headers.js';
import { closeConnectionIfBodyUnread } from './http-server/unread-body.js';

export type FrontDoorSettings = Pick<
  Environment,
  'HTTP_MAX_CONNECTIONS' | 'CORS_ORIGINS'
>;

/**
 * The front door: everything between a socket and Nest's routes, in the order a request
 * meets it, put on the server at one moment: by createApp, once Nest has made the server
 * (TimedExpressAdapter: its timeouts, no listener of ours yet) and the providers the door
 * needs (the drain, load shedding) exist. Nothing else adds a listener to the server or a
 * layer in front of Nest's routes. docs/architecture.md walks the same order, hop by hop.
 */
export function openFrontDoor(
  app: NestExpressApplication,
  settings: FrontDoorSettings,
): void {
  const server = app.getHttpServer() as Server;

  // 0. A connection: past HTTP_MAX_CONNECTIONS it is answered 503 before any parsing.
  capConnections(server, settings.HTTP_MAX_CONNECTIONS);

  // 1. Bytes Node's parser refuses (a broken request line, headers too large, a request
  //    too slow) never become a request: 400, 408 or 431 with the Error body.
  server.on('clientError', answerClientError);

  // 2-5. A request, on Node's server, before Express.
  const express = app.getHttpAdapter().getInstance() as RequestListener;
  const drain = app.get(GracefulShutdown);
  const admission = app.get(CreateAdmission);
  const shedInFrontOfExpress = admission.inFrontOf((request, response) => {
    // 5. The protocol checks Node would answer with no body, and the response hook that
    //    closes the connection of an answer sent before its body arrived.
    if (refuseWithoutHost(request, response)) return;
    closeConnectionIfBodyUnread(request, response);
    express(request, response);
  });
  const request: RequestListener = (request, response) => {
    // 3. The drain: in flight until its response closes; `Connection: close` once draining.
    drain.track(response);
    // 4. Load shedding, for the paths the plant route was met at (step 9).
    shedInFrontOfExpress(request, response);
  };
  server.on('request', request);
  // 2. `Expect: 100-continue`: an ordinary request whose `100 Continue` the body reader sends
  //    once the token and headers are accepted; any other expectation is answered 417.
  server.on('checkContinue', (continuing, response) => {
    holdContinue(continuing);
    request(continuing, response);
  });
  server.on('checkExpectation', refuseExpectation);

  // 6-8. Express, and the middleware every request passes, in the order they run.
  app.disable('x-powered-by');
  // Every answer is a fresh POST result: hashing it for an ETag is work nobody uses.
  app.set('etag', false);
  // 6. Security headers, then CORS when CORS_ORIGINS is set.
  app.use(helmet(SECURITY_HEADERS));
  enableCors(app, settings.CORS_ORIGINS);
  // The OpenAPI document and Swagger UI, read-only, ahead of the log: they are not logged.
  setupOpenApi(app);
  // 7-8. The request log and id, and the request timing: plain Express middleware (Nest's
  //    documented app.use()), not a MiddlewareConsumer's, which mounts each on a `{*path}`
  //    pattern Express matches and trims per request, behind a per-request WeakSet: for two
  //    middleware that see every request anyway, that was 3% of a create's CPU
  //    (bench/RESULTS.md, issue 19 item 7).
  for (const middleware of [
    app.get(RequestLogMiddleware),
    app.get(HttpMetricsMiddleware),
  ])
    app.use(middleware.use.bind(middleware));
  // 9 onwards: Nest's routes (load shedding's route middleware, guards, pipe, handler).
}

function enableCors(
  app: NestExpressApplication,
  origins: readonly string[],
): void {
  if (origins.length === 0) return;
  app.enableCors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['POST'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
  });
}
