import { type DynamicModule, Module } from '@nestjs/common';
import { WriteCircuitModule } from '../../lib/database/write-circuit.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { HealthController } from './health.controller.js';

/**
 * The service's probes. Readiness asks WriteCircuit (can the database commit?) and the
 * application's TokenVerifier, so forRoot takes the very AuthModule the application
 * imports (the same dynamic module object, which Nest builds once): a second one would
 * hold a second token store.
 */
@Module({})
export class HealthModule {
  static forRoot(authModule: DynamicModule): DynamicModule {
    return {
      module: HealthModule,
      imports: [
        LifecycleModule,
        WriteCircuitModule.forDataSource(),
        authModule,
      ],
      controllers: [HealthController],
    };
  }
}
