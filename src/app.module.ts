import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { AppConfigModule } from './config/config.module.js';
import type { Environment } from './config/environment.js';
import { DatabaseModule } from './database/database.module.js';
import { ApiExceptionFilter } from './errors/api-exception.filter.js';
import { HealthModule } from './health/health.module.js';
import { createValidationPipe } from './http/validation.pipe.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PlantsModule } from './plants/plants.module.js';

/**
 * The composition root. Cross-cutting pieces are providers here (APP_FILTER, APP_PIPE;
 * APP_GUARD in AuthModule), so a test that boots AppModule gets what production runs.
 * Booted through forRoot, with the Environment its caller validated.
 */
@Module({
  imports: [
    LoggingModule,
    LifecycleModule,
    DatabaseModule,
    MetricsModule,
    AuthModule,
    PlantsModule,
    HealthModule,
  ],
  providers: [
    { provide: APP_FILTER, useClass: ApiExceptionFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
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
