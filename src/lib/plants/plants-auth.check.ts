import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AuthGuardScope } from '../auth/auth-module.options.js';

/** Refuses to start without AuthModule: only its guard reads @RequiresToken() (issue 30). */
@Injectable()
export class PlantsAuthCheck implements OnModuleInit {
  constructor(private readonly moduleRef: ModuleRef) {}

  onModuleInit(): void {
    try {
      this.moduleRef.get(AuthGuardScope, { strict: false });
    } catch {
      throw new Error(
        'PlantsModule: no AuthModule in this application, so POST /plants would be open ' +
          'to anyone. Import AuthModule.forRoot(...) or AuthModule.forRootAsync(...) ' +
          'beside PlantsModule.',
      );
    }
  }
}
