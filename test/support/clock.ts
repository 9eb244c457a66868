import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Date.now counted and moved on at will, for code that waits with a deadline: it reads the
 * clock once for its deadline, then once a turn. `turns` polls without reading it; the spy is
 * undone by vi.restoreAllMocks().
 */
export function watchedClock(): {
  /** Resolves once Date.now has been read `count` times more than the first. */
  turns(count: number): Promise<void>;
  /** Moves the clock on by `ms`. */
  advance(ms: number): void;
  /** Date.now as it was. */
  restore(): void;
} {
  const real = Date.now.bind(Date);
  let ahead = 0;
  const now = vi.spyOn(Date, 'now').mockImplementation(() => real() + ahead);
  return {
    async turns(count) {
      while (now.mock.calls.length < count + 1) await sleep(10);
    },
    advance(ms) {
      ahead += ms;
    },
    restore() {
      now.mockRestore();
    },
  };
}
