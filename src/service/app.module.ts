import { type DynamicModule, Module } from '@nestjs/common';
import {
  ApiErrorsModule,
  AuthModule,
  MetricsModule,
  PlantsModule,
} from '../lib/index.js';
import { AppConfigModule } from './config/config.module.js';
import { Environment } from './config/environment.js';
import {
  authOptionsFrom,
  plantsOptionsFrom,
} from './config/package-options.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsEndpointModule } from './http-metrics/metrics-endpoint.module.js';
import { CreateAdmission } from './load-shedding/create-admission.js';
import { EventLoopDelay } from './load-shedding/event-loop-delay.js';
import {
  ServiceApiTokens,
  ServiceApiTokensModule,
} from './config/service-api-tokens.js';

/** Bearer tokens from the service's settings; the health probes share this one module. */
const auth = AuthModule.forRootAsync({
  imports: [ServiceApiTokensModule],
  inject: [Environment, ServiceApiTokens],
  useFactory: authOptionsFrom,
  // Deny by default: every route of the service needs a token unless @Public().
  globalGuard: true,
});

/** The composition root; cross-cutting pieces are providers, so a test booting AppModule gets production's. */
@Module({
  imports: [
    LoggingModule,
    LifecycleModule,
    DatabaseModule,
    ApiErrorsModule,
    MetricsModule,
    MetricsEndpointModule,
    auth,
    PlantsModule.forRootAsync({
      inject: [Environment],
      useFactory: plantsOptionsFrom,
    }),
    HealthModule.forRoot(auth),
  ],
  providers: [CreateAdmission, EventLoopDelay],
})
export class AppModule {
  static forRoot(environment: Environment): DynamicModule {
    return {
      module: AppModule,
      imports: [AppConfigModule.forRoot(environment)],
    };
  }
}
