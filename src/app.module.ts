import { type DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module.js';
import { AppConfigModule } from './config/config.module.js';
import type { Environment } from './config/environment.js';
import { DatabaseModule } from './database/database.module.js';
import { ApiErrorsModule } from './errors/api-errors.module.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsEndpointModule } from './metrics/metrics-endpoint.module.js';
import { PlantsModule } from './plants/plants.module.js';

/**
 * The composition root. Cross-cutting pieces are providers (APP_FILTER and APP_PIPE in
 * ApiErrorsModule, APP_GUARD in AuthModule), so a test that boots AppModule gets what
 * production runs. Each module imports what it uses; only the configuration is global.
 * Booted through forRoot, with the Environment its caller validated.
 */
@Module({
  imports: [
    LoggingModule,
    LifecycleModule,
    DatabaseModule,
    ApiErrorsModule,
    MetricsEndpointModule,
    AuthModule,
    PlantsModule,
    HealthModule,
  ],
})
export class AppModule {
  static forRoot(environment: Environment): DynamicModule {
    return {
      module: AppModule,
      imports: [AppConfigModule.forRoot(environment)],
    };
  }
}
