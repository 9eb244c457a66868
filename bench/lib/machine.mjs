// How busy the whole machine is: on a shared machine, other people's work moves every figure.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** The whole machine's busy and total CPU ticks, from /proc/stat. */
export function machineTicks() {
  return ticksOf(readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]);
}

/** One core's busy and total CPU ticks ("0", "1"), from /proc/stat. */
export function coreTicks(cpu) {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`cpu${cpu} `));
  return ticksOf(line);
}

function ticksOf(line) {
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = values[3] + (values[4] ?? 0); // idle + iowait
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0); // not guest, counted in user
  return { busy: total - idle, total };
}

/**
 * On a shared machine, waits (up to `maxWaitMs`) for a half second in which the machine
 * is at most `maxBusy` busy, so a scenario does not start in the middle of someone else's
 * build. Returns how long it waited and how busy the machine was when it stopped waiting.
 */
export async function waitForIdleMachine({ maxBusy = 0.25, maxWaitMs }) {
  const started = Date.now();
  let busy;
  do {
    const before = machineTicks();
    await sleep(500);
    const after = machineTicks();
    busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
  } while (busy > maxBusy && Date.now() - started < maxWaitMs);
  return { waitedMs: Date.now() - started, busy };
}
