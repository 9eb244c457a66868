// The peak resident memory of a process over a window, for the reliability scenarios and
// the benchmark (bench/) alike. Plain JavaScript so the .mjs benchmark can import it too;
// its types are in peak-rss.d.mts.
import { readFileSync } from 'node:fs';

/** Resident memory (VmRSS) of a process in kB; undefined once it is gone. */
function residentKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/**
 * Samples a process's resident memory every 100 ms from now until stop(), which answers the
 * peak seen in MB (0 if the process was never seen). A process that exits keeps its peak.
 */
export function samplePeakRss(pid) {
  let peakKb = 0;
  const sample = () => {
    peakKb = Math.max(peakKb, residentKb(pid) ?? 0);
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peakKb / 1024;
    },
  };
}
