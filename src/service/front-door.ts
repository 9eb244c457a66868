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
import type { ServiceAdapter } from './service-adapter.js';
import { earlyAnswerRule } from './http-server/early-answer.js';

const { bodyLimitBytes, holdContinue } = forTheService;

export type FrontDoorSettings = Pick<
  Environment,
  'HTTP_MAX_CONNECTIONS' | 'CORS_ORIGINS' | 'BODY_LIMIT'
>;

/**
 * The front door: everything between a socket and Nest's routes, in the order a request
 * meets it, put on the server at one moment: by createApp, once Nest has made the server
 * (service-server.ts: its timeouts, no listener of ours yet) and the providers the door
 * needs (the drain, load shedding) exist. Steps 0 to 5 are Node's server's, the same on
 * either adapter; 6 to 10 are the adapter's own (express-door.ts, fastify-door.ts). Nothing
 * else adds a listener to the server or a step in front of Nest's routes.
 * docs/architecture.md walks the same order, hop by hop.
 */
export function openFrontDoor(
  app: INestApplication,
  adapter: ServiceAdapter,
  settings: FrontDoorSettings,
): void {
  const server = app.getHttpServer() as Server;

  // 0. A connection: past HTTP_MAX_CONNECTIONS it is answered 503 before any parsing.
  capConnections(server, settings.HTTP_MAX_CONNECTIONS);

  // 1. Bytes Node's parser refuses (a broken request line, headers too large, a request too
  //    slow) never become a request: 400, 408 or 431 with the Error body, then a lingering
  //    close. The one listener on either adapter: Fastify puts one of its own on the server
  //    it is given, which this replaces.
  server.removeAllListeners('clientError');
  server.on('clientError', answerClientError);

  // 2. `Expect: 100-continue` is an ordinary request whose `100 Continue` the body reader
  //    sends once the token and headers are accepted (on 'checkContinue', below); any other
  //    expectation is answered 417 (on 'checkExpectation').
  // 2. Then, before any step can answer: an answer sent before its body arrived keeps the
  //    connection for a small body, read and dropped, and otherwise closes it with a
  //    lingering close, so that the client reads it (issue 40).
  const earlyAnswer = earlyAnswerRule(bodyLimitBytes(settings.BODY_LIMIT));
  // 3. Load shedding, for the paths the create's route was met at (step 10): under overload
  //    most requests are refused here, at little more than Node's HTTP server's own cost.
  const admission = app.get(CreateAdmission);
  // 4. The drain: in flight until its response closes; `Connection: close` once draining.
  //    Not a create refused at step 3: its answer is written whole before it returns.
  const drain = app.get(GracefulShutdown);
  // 5. The protocol checks Node would answer with no body, a method no route can have;
  //    then the adapter's handler.
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

  // 6-10. The adapter's own steps, in the order they run; then Nest's guards, pipe and
  //    handler.
  adapter.openDoor(app, {
    securityHeaders: new Map(Object.entries(securityHeaderValues())),
    corsOrigins: settings.CORS_ORIGINS,
  });
}
