import { type DynamicModule, Module } from '@nestjs/common';
import { Environment } from './environment.js';

/** Provides the Environment validated once by whoever boots the application; global. */
@Module({})
export class AppConfigModule {
  static forRoot(environment: Environment): DynamicModule {
    return {
      module: AppConfigModule,
      global: true,
      providers: [{ provide: Environment, useValue: environment }],
      exports: [Environment],
    };
  }
}
