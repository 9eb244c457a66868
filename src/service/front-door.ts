import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { forTheService } from '../lib/index.js';
import type { Environment } from './config/environment.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { CreateAdmission } from './load-shedding/create-admission.js';
import { answerClientError } from './http-server/client-error.handler.js';
import { capConnections } from './http-server/connection-cap.js';
import {
  refuseExpectation,
  refuseUnknownMethod,
  refuseWithoutHost,
} from './http-server/protocol-checks.js';
import { securityHeaderValues } from './http-server/security-headers.js';
import {
  doorStep,
  enableCors,
  type ServiceAdapter,
} from './service-adapter.js';
import { setupOpenApi } from './openapi/openapi.js';
import { earlyAnswerRule } from './http-server/early-answer.js';

const { bodyLimitBytes, holdContinue } = forTheService;

export type FrontDoorSettings = Pick<
  Environment,
  'HTTP_MAX_CONNECTIONS' | 'CORS_ORIGINS' | 'BODY_LIMIT'
>;

/**
 * Everything between a socket and Nest's routes, in the order a request meets it: steps 0-5
 * are Node's server's, 6-10 the adapter's (its pieces from `ServiceAdapter`); nothing else
 * adds a listener to the server
 * (docs/architecture.md#post-plants-hop-by-hop).
 */
export function openFrontDoor(
  app: INestApplication,
  adapter: ServiceAdapter,
  settings: FrontDoorSettings,
): void {
  const server = app.getHttpServer() as Server;

  // 0. A connection: past HTTP_MAX_CONNECTIONS it is answered 503 before any parsing.
  capConnections(server, settings.HTTP_MAX_CONNECTIONS);

  // 1. What Node's parser refuses: 400, 408 or 431 with the Error body, in place of Node's
  //    own answer (and of the listener Fastify always adds).
  server.removeAllListeners('clientError');
  server.on('clientError', answerClientError);

  // 2. `Expect: 100-continue` waits for the body reader; any other expectation is 417.
  // 2. Then, before any step can answer: the early-answer rule (early-answer.ts).
  const earlyAnswer = earlyAnswerRule(bodyLimitBytes(settings.BODY_LIMIT));
  // 3. Load shedding, for the paths the create's route was met at (step 10).
  const admission = app.get(CreateAdmission);
  // 4. The drain: in flight until its response closes (not a create refused at step 3).
  const drain = app.get(GracefulShutdown);
  // 5. The protocol checks Node would answer with no body; then the adapter's handler.
  const handle = adapter.requestListener(app);
  const afterAdmission = admission.inFrontOf((request, response) => {
    drain.track(response);
    if (refuseWithoutHost(request, response)) return;
    if (refuseUnknownMethod(request, response)) return;
    handle(request, response);
  });
  const request: typeof afterAdmission = (request, response) => {
    earlyAnswer(request, response);
    afterAdmission(request, response);
  };
  server.on('request', request);
  server.on('checkContinue', (continuing, response) => {
    holdContinue(continuing);
    request(continuing, response);
  });
  server.on('checkExpectation', (request, response) => {
    earlyAnswer(request, response);
    refuseExpectation(request, response);
  });

  // 6. No body parsed before the guards (JsonBodyGuard reads it after the bearer check).
  adapter.leaveBodiesUnread(app);
  // 6. CORS when CORS_ORIGINS is set: Nest's own, ahead of every step of ours.
  enableCors(app, settings.CORS_ORIGINS);
  // 6, 8, 9. The security headers, the request log and timing, in one step for every request.
  const securityHeaders = new Map(Object.entries(securityHeaderValues()));
  adapter.runFirst(app, doorStep(app, securityHeaders));
  // 7. The OpenAPI document and Swagger UI: routes of the adapter's own.
  setupOpenApi(app);
  // 10. Load shedding as the create route's first step; then Nest's guards, pipe, handler.
  adapter.shedAtCreateRoute(app);
}
