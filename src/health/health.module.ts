import { Module } from '@nestjs/common';
import { DatabaseHealthModule } from '../database/database-health.module.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { HealthController } from './health.controller.js';

@Module({
  imports: [LifecycleModule, DatabaseHealthModule],
  controllers: [HealthController],
})
export class HealthModule {}
