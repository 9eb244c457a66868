import { readFile } from 'node:fs/promises';

/** The pid a text starts with (postmaster.pid's first line, an owner's file): a positive integer, or undefined. */
export function pidOf(text: string): number | undefined {
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The pid a file starts with; undefined when there is no such file or no pid in it. */
export async function pidIn(path: string): Promise<number | undefined> {
  return pidOf(await readFile(path, 'utf8').catch(() => ''));
}

/** True while `pid` runs (EPERM: it runs, under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
