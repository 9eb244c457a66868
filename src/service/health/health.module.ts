import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsModule, WriteCircuitModule } from '../../lib/index.js';
import { DatabaseModule } from '../database/database.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { HealthController } from './health.controller.js';

/** The probes; forRoot takes the application's own AuthModule, so there is one token store. */
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
