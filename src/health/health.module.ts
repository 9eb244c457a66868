import { Module } from '@nestjs/common';
import { ActiveTokensModule } from '../auth/active-tokens.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { DatabasePing } from './database-ping.js';
import { HealthController } from './health.controller.js';

@Module({
  imports: [LifecycleModule, ActiveTokensModule],
  controllers: [HealthController],
  providers: [DatabasePing],
})
export class HealthModule {}
