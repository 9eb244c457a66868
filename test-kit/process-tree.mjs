// Processes as /proc tells them, for the reliability scenarios and the benchmark (bench/)
// alike: a process's tree, pinning it to cores, its CPU time. Plain JavaScript so the .mjs
// benchmark can import it too; its types are in process-tree.d.mts.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // getconf CLK_TCK; 100 on every Linux this runs on

/** The fields of a stat file (/proc/<pid>/stat) from field 3 (state) on. */
export function statFields(path) {
  const text = readFileSync(path, 'utf8');
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of a process (all its threads), or of one thread. */
export function cpuSeconds(pid, tid) {
  const fields = statFields(
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`,
  );
  // utime and stime are fields 14 and 15 of stat(5); fields[0] is field 3 (state).
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** `pid` and every process below it, now. */
export function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(statFields(`/proc/${entry}/stat`)[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const tree = [];
  const visit = (id) => {
    tree.push(id);
    for (const child of children.get(id) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/**
 * Runs every thread of `pid` and of the processes below it on `cpus` ("1", "0,1"); a
 * process forked later (a new PostgreSQL backend) inherits its parent's.
 */
export function pinProcessTree(pid, cpus) {
  for (const id of processTree(pid)) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpus, String(id)], {
        stdio: 'ignore',
      });
    } catch {
      // The process ended while we pinned it.
    }
  }
}

/**
 * CPU seconds one core has spent running processes (user, nice and system time) or lost to
 * the hypervisor (steal), from /proc/stat; interrupt time is nobody's process, so left out.
 */
export function coreSeconds(cpu) {
  const line = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .find((row) => row.startsWith(`cpu${cpu} `));
  if (line === undefined) throw new Error(`/proc/stat has no cpu${cpu}.`);
  // cpuN user nice system idle iowait irq softirq steal ...
  const [user, nice, system, , , , , steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + steal) / TICKS_PER_SECOND;
}

/**
 * A counter of the CPU seconds of `pids` and every process below them: one that has ended
 * still counts what it had used when last seen (a PostgreSQL backend closed by its pool would
 * otherwise take its seconds away, and another process's share would seem to jump).
 */
export function treesCpuSeconds(pids) {
  const seen = new Map();
  return () => {
    for (const root of pids)
      for (const id of processTree(root)) {
        try {
          seen.set(id, cpuSeconds(id));
        } catch {
          // The process ended while we looked: its last reading stands.
        }
      }
    let total = 0;
    for (const seconds of seen.values()) total += seconds;
    return total;
  };
}

/**
 * CPU seconds of this process's children that have ended and been waited for (cutime and
 * cstime): a generator run through execFile, once it has exited.
 */
export function endedChildrenSeconds() {
  const fields = statFields('/proc/self/stat');
  // cutime and cstime are fields 16 and 17 of stat(5); fields[0] is field 3 (state).
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/**
 * Starts measuring what processes other than ours (pinned to `cpu`; `ownSeconds` gives
 * their CPU seconds) take of that core; stop() gives it as a share of the core over the
 * window, 0 to 1, and `peak` the largest share over any `everyMs` within it (a burst the
 * whole window's share hides). A shared machine's other work, a niced process or a
 * hypervisor's steal all count.
 */
export function othersOnCore(cpu, ownSeconds, everyMs = 500) {
  const sample = () => ({
    core: coreSeconds(cpu),
    own: ownSeconds(),
    at: performance.now(),
  });
  const share = (from, to) =>
    Math.min(
      1,
      Math.max(
        0,
        (to.core - from.core - (to.own - from.own)) /
          ((to.at - from.at) / 1000),
      ),
    );
  const first = sample();
  let last = first;
  let peak = 0;
  const sampler = setInterval(() => {
    const now = sample();
    peak = Math.max(peak, share(last, now));
    last = now;
  }, everyMs);
  sampler.unref();
  return {
    get peak() {
      return peak;
    },
    stop() {
      clearInterval(sampler);
      return share(first, sample());
    },
  };
}
