import { Injectable } from '@nestjs/common';

/** Set once the process has been told to stop; readiness reads it. */
@Injectable()
export class ShutdownState {
  private stopping = false;

  get isShuttingDown(): boolean {
    return this.stopping;
  }

  begin(): void {
    this.stopping = true;
  }
}
