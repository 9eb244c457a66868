import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { shedAtExpressRoute } from './load-shedding/create-route.js';
import { setupOpenApi } from './openapi/openapi.js';
import { OTHER_THAN_READ } from './http-server/read-only-path.js';
import {
  doorStep,
  enableCors,
  type ServiceAdapter,
} from './service-adapter.js';
import type { ServerSettings } from './http-server/service-server.js';
import { TimedExpressAdapter } from './http-server/timed-express.adapter.js';

/** The service on @nestjs/platform-express, the design's platform (the default). */
export function expressAdapter(settings: ServerSettings): ServiceAdapter {
  const nest = new TimedExpressAdapter(settings);
  return {
    name: 'express',
    nest,
    requestListener: () =>
      nest.getInstance() as (
        request: IncomingMessage,
        response: ServerResponse,
      ) => void,
    openDoor(nestApp, settings) {
      const app = nestApp as NestExpressApplication;
      // 6. No body parser (JsonBodyGuard reads it after the bearer check), no ETag (every
      //    answer is fresh), no X-Powered-By.
      app.disable('x-powered-by');
      app.set('etag', false);
      // 6. CORS when CORS_ORIGINS is set (Nest's middleware, ahead of every one of ours).
      enableCors(app, settings.corsOrigins);
      // 6, 8, 9. One middleware for every request (doorStep), through app.use(): a
      //    MiddlewareConsumer's would be matched against a pattern per request.
      const step = doorStep(app, settings);
      app.use(
        (
          request: IncomingMessage,
          response: ServerResponse,
          next: () => void,
        ) => {
          if (step(request, response) === 'refused')
            OTHER_THAN_READ.writeTo(response);
          else next();
        },
      );
      // 7. The OpenAPI document and Swagger UI (Express routes of their own).
      setupOpenApi(app);
      // 10. Load shedding as the create route's first handler, wherever Nest mounts it.
      shedAtExpressRoute(app, nest);
    },
  };
}
