import { setTimeout as sleep } from 'node:timers/promises';

/** Something observed again and again until stopped, each observation timed. */
export interface Watch<T> {
  seen: { value: T; at: number }[];
  stop(): Promise<void>;
}

export function watch<T>(everyMs: number, observe: () => Promise<T>): Watch<T> {
  let running = true;
  const seen: { value: T; at: number }[] = [];
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const value = await observe();
      seen.push({ value, at: performance.now() });
      const pause = everyMs - (performance.now() - started);
      if (pause > 0) await sleep(pause);
    }
  })();
  return {
    seen,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** The first failure after `from`, then the first success after it: an outage's end. */
export function backAfter<T>(
  events: { ok: boolean; at: number; value?: T }[],
  from: number,
): { failedAt: number; backAt: number } | undefined {
  const failed = events.find(({ ok, at }) => !ok && at >= from);
  if (failed === undefined) return undefined;
  const back = events.find(({ ok, at }) => ok && at > failed.at);
  return back && { failedAt: failed.at, backAt: back.at };
}
