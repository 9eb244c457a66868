import { Module } from '@nestjs/common';
import { DatabasePing } from './database-ping.js';
import { HealthController } from './health.controller.js';

@Module({
  controllers: [HealthController],
  providers: [DatabasePing],
})
export class HealthModule {}
