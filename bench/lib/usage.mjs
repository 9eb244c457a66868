// What a server process uses over a measured window, as /proc tells it: CPU time (the whole
// process and its main thread), peak resident memory, and how much of the machine others
// used meanwhile.
import { readdirSync, readFileSync } from 'node:fs';
import { samplePeakRss } from '../../test-kit/peak-rss.mjs';
import { cpuSeconds, statFields } from '../../test-kit/process-tree.mjs';
import { machineTicks } from './machine.mjs';

/** A field of /proc/<pid>/status in kB (VmRSS, RssAnon, RssFile, VmHWM...); 0 if absent. */
export function statusKb(pid, key) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

/**
 * The postmaster of a database backend running on this machine, or undefined (a database
 * on another host; the name check keeps a local process that merely has the same pid out).
 */
export function postmasterOf(backendPid) {
  try {
    const text = readFileSync(`/proc/${backendPid}/stat`, 'utf8');
    if (!text.includes('(postgres)')) return undefined;
    return Number(statFields(`/proc/${backendPid}/stat`)[1]);
  } catch {
    return undefined;
  }
}

let postmasterPid;
/** Where the database's server processes hang from, when it runs on this machine. */
export function setPostmasterPid(pid) {
  postmasterPid = pid;
}

/**
 * CPU ticks used so far by this benchmark: the given processes, this one and its children
 * (pgbench; once reaped, a child's time moves into this process's cutime/cstime), and the
 * database server's processes (its postmaster and every child of it). The machine's busy
 * ticks minus these are other people's work on a shared machine.
 */
function ourTicks(pids) {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const fields = statFields(`/proc/${pid}/stat`);
      const parent = Number(fields[1]);
      const ours =
        pids.includes(pid) ||
        parent === process.pid ||
        (postmasterPid !== undefined &&
          (pid === postmasterPid || parent === postmasterPid));
      if (!ours) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
      // Children that ended (pgbench; a database backend or autovacuum worker that
      // exited) leave their time in their parent's cutime/cstime once reaped.
      if (pid === process.pid || pid === postmasterPid)
        ticks += Number(fields[13]) + Number(fields[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}

/**
 * Watches a process over a measured window: CPU time used (whole process and main thread),
 * peak resident memory sampled every 100 ms, how busy the whole machine was, and how
 * much of that was not this benchmark (`ourPids`: the servers and the load generator).
 */
export function watch(pid, ourPids = []) {
  const pids = [pid, process.pid, ...ourPids];
  const ours0 = ourTicks(pids);
  const cpu0 = cpuSeconds(pid);
  const main0 = cpuSeconds(pid, pid);
  const machine0 = machineTicks();
  const started = process.hrtime.bigint();
  const rss = samplePeakRss(pid);
  return {
    stop() {
      const peakRssMb = rss.stop();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const machine1 = machineTicks();
      const ours = ourTicks(pids) - ours0;
      let cpu = NaN;
      let mainThread = NaN;
      try {
        cpu = cpuSeconds(pid) - cpu0;
        mainThread = cpuSeconds(pid, pid) - main0;
      } catch {
        // exited
      }
      const ticks = machine1.total - machine0.total;
      return {
        seconds,
        cpuSeconds: cpu,
        mainThreadCpuSeconds: mainThread,
        peakRssMb,
        machineBusy: ticks > 0 ? (machine1.busy - machine0.busy) / ticks : NaN,
        // Per-process ticks and the machine's are both in CLK_TCK units, the machine's
        // summed over all cores: this is the share of the whole machine others used.
        othersBusy:
          ticks > 0
            ? Math.min(
                Math.max(0, machine1.busy - machine0.busy - ours),
                machine1.busy - machine0.busy,
              ) / ticks
            : NaN,
      };
    },
  };
}

/** Lifetime peak resident memory (VmHWM) of a process, in MB. */
export function highWaterMb(pid) {
  try {
    return statusKb(pid, 'VmHWM') / 1024;
  } catch {
    return NaN;
  }
}

/** A window's usage per request `served`, as the results record it. */
export function usagePerRequest(usage, served) {
  return {
    cpuMsPerRequest: (usage.cpuSeconds * 1000) / served,
    mainThreadCpuMsPerRequest: (usage.mainThreadCpuSeconds * 1000) / served,
    peakRssMb: usage.peakRssMb,
    machineBusy: usage.machineBusy,
    othersBusy: usage.othersBusy,
  };
}
