import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsModule, WriteCircuitModule } from '../../lib/index.js';
import { DatabaseModule } from '../database/database.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { HealthController } from './health.controller.js';

/**
 * The service's probes. Readiness asks DatabaseStartup (started?) and the application's
 * TokenVerifier; GET /health also asks WriteCircuit (can the database commit?). forRoot
 * takes the very AuthModule the application imports (the same dynamic module object,
 * which Nest builds once): a second one would hold a second token store.
 */
@Module({})
export class HealthModule {
  static forRoot(authModule: DynamicModule): DynamicModule {
    return {
      module: HealthModule,
      imports: [
        LifecycleModule,
        DatabaseModule,
        MetricsModule,
        WriteCircuitModule.forDataSource(),
        authModule,
      ],
      controllers: [HealthController],
    };
  }
}
