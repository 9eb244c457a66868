import { Module } from '@nestjs/common';
import { RequestTiming } from './request-timing.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsServer } from './metrics-server.js';
import { MetricsModule } from '../../lib/index.js';

/** GET /metrics (or its own port) and request timing; apart from MetricsModule, so feature modules add no route. */
@Module({
  imports: [MetricsModule],
  controllers: [MetricsController],
  providers: [MetricsServer, RequestTiming],
})
export class MetricsEndpointModule {}
