import type { Server } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { holdContinue } from '../lib/request-body/request-body.js';
import type { Environment } from './config/environment.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { CreateAdmission } from './load-shedding/create-admission.js';
import { shedAtCreateRoute } from './load-shedding/create-route.js';
import { RequestLog } from './logging/request-log.js';
import { RequestTiming } from './http-metrics/request-timing.js';
import { isDocumentationPath, setupOpenApi } from './openapi/openapi.js';
import { capConnections } from './http-server/connection-cap.js';
import {
  refuseExpectation,
  refuseUnknownMethod,
  refuseWithoutHost,
} from './http-server/protocol-checks.js';
import { isReadMethod, OTHER_THAN_READ } from './http-server/read-only-path.js';
import { securityHeaderValues } from './http-server/security-headers.js';
import type { TimedFastifyAdapter } from './http-server/timed-fastify.adapter.js';
import { closeConnectionIfBodyUnread } from './http-server/unread-body.js';
import { routeActiveServerSpan } from './tracing/server-span-route.js';

export type FrontDoorSettings = Pick<
  Environment,
  'HTTP_MAX_CONNECTIONS' | 'CORS_ORIGINS'
>;

/**
 * The front door: everything between a socket and Nest's routes, in the order a request
 * meets it, put on the server at one moment: by createApp, once Nest has made the server
 * (TimedFastifyAdapter: its timeouts, no listener of ours yet) and the providers the door
 * needs (the drain, load shedding) exist. Nothing else adds a listener to the server or a
 * hook in front of Nest's routes. docs/architecture.md walks the same order, hop by hop.
 */
export function openFrontDoor(
  app: NestFastifyApplication,
  settings: FrontDoorSettings,
): void {
  const server = app.getHttpServer() as Server;

  // 0. A connection: past HTTP_MAX_CONNECTIONS it is answered 503 before any parsing.
  capConnections(server, settings.HTTP_MAX_CONNECTIONS);

  // 1. Bytes Node's parser refuses (a broken request line, headers too large, a request
  //    too slow) never become a request: 400, 408 or 431 with the Error body. Fastify puts
  //    that answer (answerClientError) on 'clientError' itself: TimedFastifyAdapter gives it.

  // 2-5. A request, on Node's server, before Fastify.
  const adapter = app.getHttpAdapter() as unknown as TimedFastifyAdapter;
  const fastifyHandler = adapter.requestListener;
  const drain = app.get(GracefulShutdown);
  const admission = app.get(CreateAdmission);
  const request = admission.inFrontOf((request, response) => {
    // 4. The drain: in flight until its response closes; `Connection: close` once draining.
    //    Not a create refused at step 3: its answer is written whole before it returns.
    drain.track(response);
    // 5. The protocol checks Node would answer with no body, a method no route can have,
    //    and the response hook that closes the connection of an answer sent before its
    //    body arrived.
    if (refuseWithoutHost(request, response)) return;
    if (refuseUnknownMethod(request, response)) return;
    closeConnectionIfBodyUnread(request, response);
    fastifyHandler(request, response);
  });
  // 3. Load shedding first, for the paths the plant route was met at (step 10): under
  //    overload most requests are refused here, and a refusal is Node's HTTP server's cost
  //    and little more.
  server.on('request', request);
  // 2. `Expect: 100-continue`: an ordinary request whose `100 Continue` the body reader sends
  //    once the token and headers are accepted; any other expectation is answered 417.
  server.on('checkContinue', (continuing, response) => {
    holdContinue(continuing);
    request(continuing, response);
  });
  server.on('checkExpectation', refuseExpectation);

  // 6-9. Fastify, and the hooks every request passes, in the order they run.
  const fastify = adapter.getInstance() as FastifyInstance;
  // No body is read before the guards: JsonBodyGuard reads it, after the bearer check, on
  // the one route that takes one. Fastify would otherwise parse JSON (and refuse other
  // media types) before any guard ran.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => {
    done(null);
  });
  // 6. CORS when CORS_ORIGINS is set (Nest's hook, ahead of every hook of ours).
  enableCors(app, settings.CORS_ORIGINS);
  // 6, 8, 9. One hook for every request: the security headers (helmet's, worked out once
  //    and set on Fastify's reply, so that they go out with its own in one `writeHead`);
  //    then, on every path but the documentation's, the request log and id, and the
  //    request timing, which follow the answer's events. The documentation's paths are
  //    read-only (any other method is 405 here) and are neither logged nor timed.
  const securityHeaders = securityHeaderValues();
  const log = app.get(RequestLog);
  const timing = app.get(RequestTiming);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.headers(securityHeaders);
    if (!isDocumentationPath(request.url)) {
      log.follow(request, reply);
      timing.follow(request, reply.raw);
      routeActiveServerSpan(request);
    } else if (!isReadMethod(request.method)) {
      OTHER_THAN_READ.sendThrough(reply);
      return;
    }
    done();
  });
  // 7. The OpenAPI document and Swagger UI (Fastify routes of their own, behind the hook).
  setupOpenApi(app);
  // 10. Load shedding on the create's route, first of its hooks, wherever Nest mounts it:
  //    each path it meets is learned for step 3.
  shedAtCreateRoute(app, fastify);
  // 11 onwards: Nest's guards, pipe and handler.
}

function enableCors(
  app: NestFastifyApplication,
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
