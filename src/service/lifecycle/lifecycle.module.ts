import { Module } from '@nestjs/common';
import { GracefulShutdown } from './graceful-shutdown.js';
import { ShutdownState } from './shutdown-state.js';

@Module({
  providers: [ShutdownState, GracefulShutdown],
  exports: [ShutdownState, GracefulShutdown],
})
export class LifecycleModule {}
