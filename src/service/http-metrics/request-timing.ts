import type { ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { MetricsService, routeLabel } from '../../lib/index.js';
import type { FollowedRequest } from '../logging/request-log.js';

/** Times every request, labelled by the route template so that label values stay few. */
@Injectable()
export class RequestTiming {
  constructor(private readonly metrics: MetricsService) {}

  /** Called by the front door as a request arrives, with Node's response. */
  follow(request: FollowedRequest, response: ServerResponse): void {
    const started = process.hrtime.bigint();
    // Once per answer: `on` spares the wrapper `once` allocates per request.
    response.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.httpRequestDuration.observe(
        {
          method: request.method,
          route: routeLabel(request),
          status: String(response.statusCode),
        },
        seconds,
      );
    });
  }
}
