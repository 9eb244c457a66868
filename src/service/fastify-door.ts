import type { FastifyInstance } from 'fastify';
import { shedAtFastifyRoute } from './load-shedding/create-route.js';
import { routeActiveServerSpan } from './tracing/server-span-route.js';
import { OTHER_THAN_READ } from './http-server/read-only-path.js';
import type { ServiceAdapter } from './service-adapter.js';
import type { ServerSettings } from './http-server/service-server.js';
import { TimedFastifyAdapter } from './http-server/timed-fastify.adapter.js';

/** Accepts any body and reads none of it. */
const bodyLeftUnread = (
  _request: unknown,
  _payload: unknown,
  done: (error: null) => void,
) => done(null);

/** The service on @nestjs/platform-fastify (HTTP_ADAPTER=fastify). */
export function fastifyAdapter(settings: ServerSettings): ServiceAdapter {
  const nest = new TimedFastifyAdapter(settings);
  const fastify = () => nest.getInstance() as FastifyInstance;
  return {
    name: 'fastify',
    nest,
    requestListener: () => nest.requestListener,
    leaveBodiesUnread() {
      // 6. application/json too: Fastify caches the parser found for a type, but not the
      //    catch-all.
      fastify().removeAllContentTypeParsers();
      fastify().addContentTypeParser('application/json', bodyLeftUnread);
      fastify().addContentTypeParser('*', bodyLeftUnread);
    },
    runFirst(_app, step) {
      // 6, 8, 9. One onRequest hook.
      fastify().addHook('onRequest', (request, reply, done) => {
        const path = step(request, reply);
        if (path === 'refused') {
          OTHER_THAN_READ.sendThrough(reply);
          return;
        }
        // Fastify knows the route here; Express by the answer (server-spans.ts).
        if (path === 'followed') routeActiveServerSpan(request);
        done();
      });
    },
    shedAtCreateRoute(app) {
      // 10. As the create route's first hook.
      shedAtFastifyRoute(app, fastify());
    },
  };
}
