import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AuthGuardScope } from '../auth/auth-module.options.js';

/**
 * The plant routes are marked @RequiresToken(), which only AuthModule's guard reads: an
 * application without AuthModule would serve them to anyone (issue 30). It does not start.
 */
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
