import { readdirSync, readFileSync } from 'node:fs';

/** The parent of each process, read from /proc: an empty map where there is none. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parentOf;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      parentOf.set(Number(entry), Number(parent));
    } catch {
      // The process ended while we looked.
    }
  }
  return parentOf;
}

/** `pid` and every process below it now: a postmaster and its backends. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents())
    children.set(parent, [...(children.get(parent) ?? []), child]);
  const tree: number[] = [];
  const visit = (id: number): void => {
    tree.push(id);
    for (const child of children.get(id) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** Sends `signal` to each process, skipping those that ended meanwhile. */
export function signalEach(
  pids: readonly number[],
  signal: NodeJS.Signals,
): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}
