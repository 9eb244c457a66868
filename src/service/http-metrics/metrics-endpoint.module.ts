import { Module } from '@nestjs/common';
import { RequestTiming } from './request-timing.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsServer } from './metrics-server.js';
import { MetricsModule } from '../../lib/index.js';

/**
 * Publishes the metrics: GET /metrics (or its own port) and the request timing of every
 * route (RequestTiming, which the front door, front-door.ts, hands every request).
 * Apart from MetricsModule so that importing a feature module never adds a route.
 */
@Module({
  imports: [MetricsModule],
  controllers: [MetricsController],
  providers: [MetricsServer, RequestTiming],
})
export class MetricsEndpointModule {}
