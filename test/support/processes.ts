import { readFileSync } from 'node:fs';
import { connectError } from './raw-http.js';

/** The processes of `pids` still running (a zombie counts as gone). */
export function alive(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    return !/\) Z /.test(readProcStat(pid));
  });
}

function readProcStat(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return ') Z ';
  }
}

/** Whether anything accepts connections on the port. */
export async function portIsOpen(port: number): Promise<boolean> {
  return (await connectError(port)) === undefined;
}
