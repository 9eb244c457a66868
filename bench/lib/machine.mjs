// How busy the whole machine is: on a shared machine, other people's work moves every figure.
// And what the machine is, for the heading of the results.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** The whole machine's busy and total CPU ticks, from /proc/stat. */
export function machineTicks() {
  return ticksOf(readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]);
}

/** One core's line of /proc/stat ("0", "1"). */
function coreLine(cpu) {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`cpu${cpu} `));
}

/** One core's busy and total CPU ticks ("0", "1"), from /proc/stat. */
export function coreTicks(cpu) {
  return ticksOf(coreLine(cpu));
}

/**
 * One core's CPU ticks by kind, from /proc/stat: user (nice included), system, idle (iowait
 * included), irq, softirq (the kernel's network work, charged to no process) and steal.
 */
export function coreTimes(cpu) {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = coreLine(cpu)
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    user: user + nice,
    system,
    idle: idle + iowait,
    irq,
    softirq,
    steal,
  };
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

/**
 * Waits for a calm machine before a scenario (up to `idleWaitSeconds`, none at 0), and says
 * so when it did not get one at once. Returns how busy the machine was when it started.
 */
export async function settle(idleWaitSeconds, log) {
  if (idleWaitSeconds <= 0) return { busyBefore: NaN };
  const { waitedMs, busy } = await waitForIdleMachine({
    maxWaitMs: idleWaitSeconds * 1000,
  });
  if (waitedMs > 1000)
    log(
      `waited ${(waitedMs / 1000).toFixed(0)} s for the machine to calm down (now ${(busy * 100).toFixed(0)}% busy)`,
    );
  return { busyBefore: busy };
}

/** How busy the whole machine was over the next second (0 to 1). */
export async function busyOverOneSecond() {
  const before = machineTicks();
  await sleep(1000);
  const after = machineTicks();
  return (after.busy - before.busy) / (after.total - before.total);
}

/** The machine the figures were measured on. */
export function machineDescription() {
  const cpuinfo = execFileSync('cat', ['/proc/cpuinfo'], { encoding: 'utf8' });
  const model =
    /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model;
  return {
    cores: cpus().length,
    cpuModel: model,
    memoryGiB: totalmem() / 2 ** 30,
    os: `${type()} ${release()}`,
    node: process.version,
  };
}
