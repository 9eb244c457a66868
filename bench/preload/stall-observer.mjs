// Preload into the service to see where its latency tail comes from: every garbage
// collection of 3 ms or more, and every time a 5 ms timer fires 10 ms or more late (the
// event loop was blocked), one line each with the wall-clock time in epoch ms, appended to
// bench/results/stalls-<pid>.log. The times line up with the request log's `time` field.
//
//   npm run bench:check -- -- --import=./bench/preload/stall-observer.mjs
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');
mkdirSync(RESULTS, { recursive: true });
const out = join(RESULTS, `stalls-${process.pid}.log`);
const KINDS = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak-callbacks' };
const epoch = (relative) => Math.round(performance.timeOrigin + relative);

new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if (entry.duration >= 3)
      appendFileSync(
        out,
        `gc ${epoch(entry.startTime)} ${entry.duration.toFixed(1)} ${KINDS[entry.detail?.kind] ?? entry.detail?.kind}\n`,
      );
}).observe({ entryTypes: ['gc'] });

let last = performance.now();
setInterval(() => {
  const now = performance.now();
  const late = now - last - 5;
  if (late >= 10)
    appendFileSync(out, `late ${epoch(now)} ${late.toFixed(1)}\n`);
  last = now;
}, 5).unref();
