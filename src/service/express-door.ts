import type {
  IncomingMessage,
  RequestListener,
  ServerResponse,
} from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { shedAtExpressRoute } from './load-shedding/create-route.js';
import { OTHER_THAN_READ } from './http-server/read-only-path.js';
import type { ServiceAdapter } from './service-adapter.js';
import type { ServerSettings } from './http-server/service-server.js';
import { TimedExpressAdapter } from './http-server/timed-express.adapter.js';

/** The service on @nestjs/platform-express, the design's platform (the default). */
export function expressAdapter(settings: ServerSettings): ServiceAdapter {
  const nest = new TimedExpressAdapter(settings);
  return {
    name: 'express',
    nest,
    requestListener: () => nest.getInstance() as RequestListener,
    leaveBodiesUnread(app) {
      // 6. Nest's body parser is off from creation (bodyParser: false); no ETag (every
      //    answer is fresh), no X-Powered-By.
      (app as NestExpressApplication)
        .disable('x-powered-by')
        .set('etag', false);
    },
    runFirst(app, step) {
      // 6, 8, 9. One middleware through app.use(): a MiddlewareConsumer's would be matched
      //    against a pattern per request.
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
    },
    shedAtCreateRoute(app) {
      // 10. As the create route's first handler.
      shedAtExpressRoute(app, nest);
    },
  };
}
