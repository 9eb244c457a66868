import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '../../../test/support/poll.js';
import { EventLoopDelay } from './event-loop-delay.js';

/** Holds the event loop for `ms`, as a turn with that much work in it does. */
function holdTheLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('EventLoopDelay', () => {
  let loop: EventLoopDelay;
  beforeEach(() => {
    loop = new EventLoopDelay();
  });
  afterEach(() => loop.onApplicationShutdown());

  it('runs no timer and reads 0 until watched', async () => {
    holdTheLoop(50);
    await sleep(20);
    expect(loop.watching).toBe(false);
    expect(loop.delayMs).toBe(0);
  });

  it('reads how late its tick fired after a long turn, and follows the loop back once it catches up', async () => {
    loop.watch();
    expect(loop.watching).toBe(true);
    // A tick comes due during the turn, so it fires at least 70 ms late; this timer, due
    // after it and before the tick after it, reads what it measured.
    holdTheLoop(80);
    await sleep(1);
    expect(loop.delayMs).toBeGreaterThanOrEqual(69);
    expect(loop.ticks).toBe(1);
    // Watched on, the next ticks fire on time again (a busy machine may delay a few).
    await eventually('a tick on time', () =>
      (loop.watch(), loop.delayMs < 60) ? true : undefined,
    );
  });

  it('stops its timer and reads 0 again about a second after the last watch', async () => {
    loop.watch();
    holdTheLoop(30);
    await eventually('a tick', () => (loop.delayMs > 0 ? true : undefined));
    await eventually(
      'the watch to end',
      () => (loop.watching ? undefined : true),
      { timeoutMs: 10_000 },
    );
    expect(loop.delayMs).toBe(0);
  });
});
