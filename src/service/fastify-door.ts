import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { shedAtFastifyRoute } from './load-shedding/create-route.js';
import { routeActiveServerSpan } from './tracing/server-span-route.js';
import { setupOpenApi } from './openapi/openapi.js';
import { OTHER_THAN_READ } from './http-server/read-only-path.js';
import {
  doorStep,
  enableCors,
  type ServiceAdapter,
} from './service-adapter.js';
import type { ServerSettings } from './http-server/service-server.js';
import { TimedFastifyAdapter } from './http-server/timed-fastify.adapter.js';

/** The service on @nestjs/platform-fastify (HTTP_ADAPTER=fastify). */
export function fastifyAdapter(settings: ServerSettings): ServiceAdapter {
  const nest = new TimedFastifyAdapter(settings);
  return {
    name: 'fastify',
    nest,
    requestListener: () => nest.requestListener,
    openDoor(nestApp, settings) {
      const app = nestApp as NestFastifyApplication;
      const fastify = nest.getInstance() as FastifyInstance;
      // 6. No body read before the guards (JsonBodyGuard reads it). application/json too:
      //    Fastify caches the parser found for a type, but not the catch-all.
      fastify.removeAllContentTypeParsers();
      const bodyLeftUnread = (
        _request: unknown,
        _payload: unknown,
        done: (error: null) => void,
      ) => done(null);
      fastify.addContentTypeParser('application/json', bodyLeftUnread);
      fastify.addContentTypeParser('*', bodyLeftUnread);
      // 6. CORS when CORS_ORIGINS is set (Nest's hook, ahead of every hook of ours).
      enableCors(app, settings.corsOrigins);
      // 6, 8, 9. One hook for every request (doorStep).
      const step = doorStep(app, settings);
      fastify.addHook('onRequest', (request, reply, done) => {
        const path = step(request, reply);
        if (path === 'refused') {
          OTHER_THAN_READ.sendThrough(reply);
          return;
        }
        // Fastify knows the route here; Express by the answer (server-spans.ts).
        if (path === 'followed') routeActiveServerSpan(request);
        done();
      });
      // 7. The OpenAPI document and Swagger UI (Fastify routes of their own).
      setupOpenApi(app);
      // 10. Load shedding as the create route's first hook, wherever Nest mounts it.
      shedAtFastifyRoute(app, fastify);
    },
  };
}
