import { Module } from '@nestjs/common';
import { MetricsService } from './metrics.service.js';

/** The service's Prometheus registry and counters: a module that counts something imports this. */
@Module({
  providers: [MetricsService],
  exports: [MetricsService],
})
export class MetricsModule {}
