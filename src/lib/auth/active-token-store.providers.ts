import {
  type BeforeApplicationShutdown,
  Injectable,
  type OnApplicationBootstrap,
  type Provider,
} from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Counter } from 'prom-client';
import type { DataSource } from 'typeorm';
import { MetricsService } from '../metrics/metrics.service.js';
import { AuthSettings } from './auth-module.options.js';
import { schemaQualified } from '../database/schema-qualified.js';
import {
  ActiveTokenStore,
  type ReloadReason,
} from '../managed-tokens/active-tokens.store.js';
import { listenerConnection } from '../managed-tokens/listener-connection.js';

/** Starts the store with the application and stops it before the pool and database close. */
@Injectable()
class ActiveTokenStoreLifecycle
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  constructor(
    private readonly store: ActiveTokenStore,
    metrics: MetricsService,
  ) {
    registerMetrics(metrics, store);
  }

  onApplicationBootstrap(): Promise<void> {
    return this.store.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.store.stop();
  }
}

function registerMetrics(metrics: MetricsService, store: ActiveTokenStore) {
  metrics.gauge(
    'api_tokens_held',
    'Active managed tokens held in memory',
    () => store.stats().tokens,
  );
  metrics.gauge(
    'api_token_store_complete',
    '1 when every active managed token is held in memory; 0 past TOKEN_STORE_MAX_TOKENS (the rest are looked up per request)',
    () => (store.stats().complete ? 1 : 0),
  );
  metrics.gauge(
    'api_token_sync_listening',
    '1 while the token store listens for changes to api_tokens',
    () => (store.stats().listening ? 1 : 0),
  );
  metrics.gauge(
    'api_token_sync_contact_age_seconds',
    'Age of the token store last confirmed contact with the database; past TOKEN_SYNC_MAX_STALENESS_MS managed tokens get 503',
    () => Math.min(store.stats().secondsSinceContact, 1e9),
  );
  // The store counts in plain numbers; what grew since the last scrape is added then.
  const reported: Record<ReloadReason, number> = {
    connect: 0,
    periodic: 0,
    notified: 0,
  };
  new Counter({
    name: 'api_token_store_reloads_total',
    help: 'Full reloads of the active managed tokens, by reason: connect (start or reconnect), periodic, notified (a truncate, or many changes at once)',
    labelNames: ['reason'] as const,
    registers: [metrics.registry],
    collect() {
      const counts = store.stats().reloads;
      for (const reason of Object.keys(reported) as ReloadReason[]) {
        this.labels(reason).inc(counts[reason] - reported[reason]);
        reported[reason] = counts[reason];
      }
    },
  });
  let reconnects = 0;
  new Counter({
    name: 'api_token_sync_connection_failures_total',
    help: 'Token sync connections lost, refused or silent past the heartbeat timeout',
    registers: [metrics.registry],
    collect() {
      const now = store.stats().reconnects;
      this.inc(now - reconnects);
      reconnects = now;
    },
  });
}

/** The ActiveTokenStore behind AuthModule's own verifier, with its start, stop and metrics, on AuthModule's `dataSource`. */
export function activeTokenStoreProviders(dataSource?: string): Provider[] {
  return [
    {
      provide: ActiveTokenStore,
      inject: [AuthSettings, getDataSourceToken(dataSource)],
      useFactory: (settings: AuthSettings, dataSource: DataSource) =>
        new ActiveTokenStore({
          maxTokens: settings.tokenStoreMaxTokens,
          maxStalenessMs: settings.tokenSyncMaxStalenessMs,
          reloadIntervalMs: settings.tokenReloadIntervalMs,
          table: schemaQualified(dataSource, 'api_tokens'),
          connect: listenerConnection(
            dataSource,
            settings.tokenSyncMaxStalenessMs,
          ),
        }),
    },
    ActiveTokenStoreLifecycle,
  ];
}
