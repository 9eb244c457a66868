import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ApplicationConfig } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { PlantRoutes } from '../../lib/index.js';
import type { TimedExpressAdapter } from '../http-server/timed-express.adapter.js';
import { CreateAdmission } from './create-admission.js';

/**
 * The path Nest mounts the create at: the global prefix, if any, then the path of the
 * controller PlantsModule registered for it (its `path` option). Read when Nest registers
 * its routes, once the prefix is set.
 */
function createPathOf(app: INestApplication): string {
  const prefix = app.get(ApplicationConfig).getGlobalPrefix();
  const controllerPath = Reflect.getMetadata(
    PATH_METADATA,
    app.get(PlantRoutes).create,
  ) as string;
  const segments = [prefix, controllerPath]
    .flatMap((part) => part.split('/'))
    .filter((segment) => segment !== '');
  return `/${segments.join('/')}`;
}

/**
 * Puts CreateAdmission.atRoute on the create's route as a Fastify route hook, wherever Nest
 * mounts it: it runs after the hooks every request passes and before Nest's guards, for
 * that route alone, however its path is spelled (Fastify has matched it). Why not a Nest
 * route middleware (`consumer.apply().forRoutes()`), as it was: on Fastify that mounts
 * @fastify/middie, which then copies ten of Fastify's request properties (the query, the
 * addresses, the host) onto Node's request for every request, and matches every path
 * against the middleware's: 8% of a create's CPU (bench/RESULTS.md, issue 32). A start
 * where no route is the create stops, rather than serve without load shedding.
 */
export function shedAtFastifyRoute(
  app: INestApplication,
  fastify: FastifyInstance,
): void {
  const admission = app.get(CreateAdmission);
  const atRoute: onRequestHookHandler = (request, reply, done) => {
    admission.atRoute(request.raw, reply.raw, done);
  };
  let bound = false;
  // Asked of every POST route as it is registered: Nest registers its own at init, after a
  // global prefix is set.
  fastify.addHook('onRoute', (route) => {
    if (![route.method].flat().includes('POST')) return;
    if (route.url !== createPathOf(app)) return;
    route.onRequest = [route.onRequest ?? []].flat().concat(atRoute);
    bound = true;
  });
  fastify.addHook('onReady', (done) => {
    done(bound ? undefined : noCreateRoute(app));
  });
}

function noCreateRoute(app: INestApplication): Error {
  return new Error(
    `No POST route at ${createPathOf(app)} for load shedding: the create must be ` +
      "the POST of PlantsModule's controller, at the controller's own path.",
  );
}

/**
 * On Express: CreateAdmission.atRoute as the create route's first handler, wherever Nest
 * mounts it, for that route alone (no middleware every request passes), however its path
 * is spelled (Express has matched it). A start where no route is the create stops.
 */
export function shedAtExpressRoute(
  app: INestApplication,
  express: TimedExpressAdapter,
): void {
  const admission = app.get(CreateAdmission);
  const atRoute = (
    request: IncomingMessage,
    response: ServerResponse,
    next: () => void,
  ): void => admission.atRoute(request, response, next);
  let bound = false;
  express.onPostRoute((path) => {
    if (path !== createPathOf(app)) return undefined;
    bound = true;
    return atRoute;
  });
  express.beforeListen(() => {
    if (!bound) throw noCreateRoute(app);
  });
}
