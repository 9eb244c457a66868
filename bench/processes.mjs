// Child processes (the service, the baseline) and what /proc says about them.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop } from './closed-loop.mjs';
import { startNodeProcess } from '../test-kit/node-process.mjs';
import { samplePeakRss } from '../test-kit/peak-rss.mjs';

// The benchmark starts the service with production's flags, as the tests do.
export { productionNodeFlags } from '../test-kit/node-process.mjs';
// One free port for the benchmark's servers and the tests' alike.
export { freePort } from '../test-kit/free-port.mjs';

/**
 * The environment a server gets to run as production runs it: production mode, JSON logs,
 * listening on `port` on the loopback interface; `extra` adds to it or overrides it.
 */
export function serverEnv(port, extra = {}) {
  return {
    ...process.env,
    NODE_ENV: 'production',
    LOG_FORMAT: 'json',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...extra,
  };
}

const TICKS_PER_SECOND = 100; // getconf CLK_TCK; 100 on every Linux this runs on

/** User + system CPU seconds of a process (all its threads), or of one thread. */
export function cpuSeconds(pid, tid) {
  const path =
    tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const text = readFileSync(path, 'utf8');
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5); fields[0] is field 3 (state).
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** A field of /proc/<pid>/status in kB (VmRSS, RssAnon, RssFile, VmHWM...); 0 if absent. */
export function statusKb(pid, key) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

/** The whole machine's busy and total CPU ticks, from /proc/stat. */
export function machineTicks() {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = values[3] + (values[4] ?? 0); // idle + iowait
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0); // not guest, counted in user
  return { busy: total - idle, total };
}

/** The fields of /proc/<pid>/stat from field 3 (state) on; the name may hold spaces. */
function statFields(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/**
 * The postmaster of a database backend running on this machine, or undefined (a database
 * on another host; the name check keeps a local process that merely has the same pid out).
 */
export function postmasterOf(backendPid) {
  try {
    const text = readFileSync(`/proc/${backendPid}/stat`, 'utf8');
    if (!text.includes('(postgres)')) return undefined;
    return Number(statFields(backendPid)[1]);
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
      const fields = statFields(pid);
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

/**
 * One measured closed-loop window (`closedLoop(load)`) on a server process: the run, what
 * the process used meanwhile (`watch`), the answers of any status, and the CPU per answer,
 * whole process and main thread.
 */
export async function measuredClosedLoop(pid, load, ourPids = []) {
  const watcher = watch(pid, ourPids);
  const run = await closedLoop(load);
  const usage = watcher.stop();
  const answered = Object.values(run.statuses).reduce((a, b) => a + b, 0);
  return {
    run,
    usage,
    answered,
    cpuMsPerAnswer: (usage.cpuSeconds * 1000) / answered,
    mainThreadCpuMsPerAnswer: (usage.mainThreadCpuSeconds * 1000) / answered,
  };
}

/**
 * The runtime a server process really runs on ("Node.js v24.21.0"), asked of the executable
 * it was started from (/proc/<pid>/exe), not assumed from this process's own.
 */
export function runtimeOf(pid) {
  try {
    const executable = readlinkSync(`/proc/${pid}/exe`);
    const version = execFileSync(executable, ['--version'], {
      encoding: 'utf8',
    }).trim();
    return `Node.js ${version}`;
  } catch {
    return 'unknown runtime';
  }
}

/** Lifetime peak resident memory (VmHWM) of a process, in MB. */
export function highWaterMb(pid) {
  try {
    return statusKb(pid, 'VmHWM') / 1024;
  } catch {
    return NaN;
  }
}

/**
 * Starts a server process and resolves once GET <url>/health answers 200, with the time
 * from spawn to that answer. Its output is kept (the last lines) to explain a failure.
 */
export async function startServer({
  name,
  args,
  env,
  port,
  timeoutMs = 60_000,
  logFile,
}) {
  const spawnedAt = process.hrtime.bigint();
  // With a log file, stdout (the request log) goes there; stderr stays here for errors.
  const stdout = logFile === undefined ? 'pipe' : openSync(logFile, 'a');
  const output = [];
  const keep = (text) => {
    output.push(...text.split('\n').filter(Boolean));
    if (output.length > 60) output.splice(0, output.length - 60);
  };
  const { child, exited } = startNodeProcess({
    args,
    env,
    stdout,
    onOutput: keep,
  });
  if (typeof stdout === 'number') closeSync(stdout);
  let exit;
  exited.then((value) => (exit = value));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exit !== undefined)
      throw new Error(
        `${name} exited (${exit.code ?? exit.signal}) before it was ready:\n  ${output.join('\n  ')}`,
      );
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${name} was not ready within ${timeoutMs} ms:\n  ${output.join('\n  ')}`,
      );
    }
    const status = await fetch(`${url}/health`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) break;
    await sleep(10);
  }
  const readyMs = Number(process.hrtime.bigint() - spawnedAt) / 1e6;
  return {
    name,
    url,
    port,
    pid: child.pid,
    readyMs,
    output,
    /** SIGTERM, then wait for the exit (SIGKILL after a grace period). */
    async stop(graceMs = 15_000) {
      if (exit !== undefined) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
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
