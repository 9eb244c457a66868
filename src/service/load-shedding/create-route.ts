import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ApplicationConfig } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { PlantRoutes } from '../../lib/index.js';
import type { TimedExpressAdapter } from '../http-server/timed-express.adapter.js';
import { CreateAdmission } from './create-admission.js';

/** Where Nest mounts the create: global prefix, then the PlantsModule controller's path. */
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
 * CreateAdmission.atRoute as a route hook on the create, not a Nest middleware, which mounts
 * @fastify/middie (docs/performance.md#what-bought-the-most-and-where-it-is-measured). No create: no start.
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

/** On Express: CreateAdmission.atRoute as the create route's first handler; stops the start if none. */
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
