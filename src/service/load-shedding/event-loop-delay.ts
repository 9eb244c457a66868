import { Injectable, type OnApplicationShutdown } from '@nestjs/common';

/** A tick every this many ms while watched: fine enough to see a turn of 100 ms or more. */
const TICK_MS = 10;
/** Ticks with no `watch()` between them before the watch ends: about a second. */
const QUIET_TICKS = 100;

/** How late the event loop runs, timed only while creates are refused (docs/performance.md#behind-refuse-every-create). */
@Injectable()
export class EventLoopDelay implements OnApplicationShutdown {
  /** How late the last tick fired, in ms; 0 when not watching. */
  delayMs = 0;
  /** Ticks so far: which turn of the loop a moment belongs to, for those that compare two. */
  ticks = 0;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = 0;
  private watchedSinceTick = false;
  private quietTicks = 0;

  /** Keeps the watch on for about a second more: called per refusal, so it costs a store. */
  watch(): void {
    this.watchedSinceTick = true;
    if (this.timer === undefined) {
      this.dueAt = performance.now() + TICK_MS;
      this.timer = setInterval(() => this.tick(), TICK_MS).unref();
    }
  }

  get watching(): boolean {
    return this.timer !== undefined;
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  private tick(): void {
    const now = performance.now();
    this.delayMs = Math.max(0, now - this.dueAt);
    this.ticks += 1;
    // Node schedules the next tick from the end of this one.
    this.dueAt = now + TICK_MS;
    if (this.watchedSinceTick) {
      this.watchedSinceTick = false;
      this.quietTicks = 0;
    } else if (++this.quietTicks >= QUIET_TICKS) this.stop();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.delayMs = 0;
    this.quietTicks = 0;
  }
}
