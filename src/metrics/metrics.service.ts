import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
} from 'prom-client';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';

/** The service's Prometheus metrics, in a registry of its own (not prom-client's global). */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ],
    registers: [this.registry],
  });

  readonly plantsCreated = new Counter({
    name: 'plants_created_total',
    help: 'Plants stored',
    registers: [this.registry],
  });

  readonly plantReplays = new Counter({
    name: 'plants_replayed_total',
    help: 'Creates that repeated a stored plant exactly (safe retries, nothing written)',
    registers: [this.registry],
  });

  readonly plantConflicts = new Counter({
    name: 'plants_conflicts_total',
    help: 'Creates refused because the id holds another plant (409)',
    registers: [this.registry],
  });

  constructor(@InjectDataSource() dataSource: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    const pool = (): Pool | undefined =>
      (dataSource.driver as unknown as { master?: Pool }).master;
    const poolGauge = (
      name: string,
      help: string,
      read: (pool: Pool) => number,
    ) =>
      this.gauge(name, help, () => {
        const current = pool();
        return current === undefined ? undefined : read(current);
      });
    poolGauge(
      'db_pool_connections',
      'Connections open in the pool',
      (p) => p.totalCount,
    );
    poolGauge(
      'db_pool_idle_connections',
      'Idle connections in the pool',
      (p) => p.idleCount,
    );
    poolGauge(
      'db_pool_waiting_requests',
      'Queries waiting for a connection',
      (p) => p.waitingCount,
    );
  }

  /** A gauge read when the metrics are scraped: `read` answers undefined to leave it as it is. */
  gauge(name: string, help: string, read: () => number | undefined): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const value = read();
        if (value !== undefined) this.set(value);
      },
    });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return {
      contentType: this.registry.contentType,
      body: await this.registry.metrics(),
    };
  }
}
