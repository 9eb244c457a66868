// The run's progress on stderr: each line with the seconds since the run started and the
// load average, so that a figure can be read beside what the machine was doing.
import { loadavg } from 'node:os';

export function progressLog(started) {
  return (message) =>
    process.stderr.write(
      `[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s, load ${loadavg()[0].toFixed(2)}] ${message}\n`,
    );
}
