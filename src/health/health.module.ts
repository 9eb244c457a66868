import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { DatabasePing } from './database-ping.js';
import { HealthController } from './health.controller.js';

@Module({
  imports: [LifecycleModule],
  controllers: [HealthController],
  providers: [DatabasePing],
})
export class HealthModule {}
