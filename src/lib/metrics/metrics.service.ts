import { Injectable, Optional } from '@nestjs/common';
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

const SHED_REASONS = ['concurrency', 'queue', 'event_loop'] as const;
/** Which bound a create shed before any work met. */
export type ShedReason = (typeof SHED_REASONS)[number];

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

  /**
   * Refusals by bound, plain numbers added to plants_shed_total when read: a labelled
   * counter costs too much per refusal (docs/performance.md#small-costs-paid-per-request).
   */
  readonly shedSinceRead: Record<ShedReason, number> = {
    concurrency: 0,
    queue: 0,
    event_loop: 0,
  };

  readonly createsShed = new Counter({
    name: 'plants_shed_total',
    help: 'Creates answered 503 before any work (load shedding), by the bound they met: concurrency (CREATE_CONCURRENCY_LIMIT worked on and CREATE_WAITING_LIMIT waiting) or queue (the insert queue past INSERT_QUEUE_LIMIT or INSERT_QUEUE_WAIT_MS, or a create that waited CREATE_WAITING_TIMEOUT_MS for its turn) or event_loop (every create while refusing and the event loop is later than CREATE_EVENT_LOOP_DELAY_LIMIT_MS)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
    collect: () => {
      for (const reason of SHED_REASONS) {
        this.createsShed.labels(reason).inc(this.shedSinceRead[reason]);
        this.shedSinceRead[reason] = 0;
      }
    },
  });

  readonly plantConflicts = new Counter({
    name: 'plants_conflicts_total',
    help: 'Creates refused because the id holds another plant (409)',
    registers: [this.registry],
  });

  /** Readers of each gauge by name: modules configured twice add up (gauge()). */
  private readonly gaugeReaders = new Map<
    string,
    (() => number | undefined)[]
  >();

  /** Pool gauges follow the default connection only. */
  constructor(@Optional() @InjectDataSource() dataSource?: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    const pool = (): Pool | undefined =>
      (dataSource?.driver as unknown as { master?: Pool } | undefined)?.master;
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

  /** A gauge read at scrape time (undefined: unchanged); the same name twice is summed, not re-registered. */
  gauge(name: string, help: string, read: () => number | undefined): void {
    const known = this.gaugeReaders.get(name);
    if (known !== undefined) {
      known.push(read);
      return;
    }
    const readers = [read];
    this.gaugeReaders.set(name, readers);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const values = readers
          .map((reader) => reader())
          .filter((value) => value !== undefined);
        if (values.length > 0)
          this.set(values.reduce((sum, value) => sum + value, 0));
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
