import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { routeLabel } from '../../lib/common/route-label.js';
import { MetricsService } from '../../lib/metrics/metrics.service.js';

/** Times every request, labelled by the route template so that label values stay few. */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(request: Request, response: Response, next: NextFunction): void {
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
    next();
  }
}
