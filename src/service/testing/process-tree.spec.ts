import type { ChildProcess } from 'node:child_process';
import { eventually } from '../../../test/support/poll.js';
import {
  parentWithChild,
  signalsOnlyBelowThisProcess,
} from '../../../test/support/processes.js';
import { isAlive } from '../database/pid-files.js';
import { processTree, signalEach } from './process-tree.js';

describe('process-tree: a process and those below it, from /proc', () => {
  let parent: ChildProcess | undefined;
  beforeEach(() => signalsOnlyBelowThisProcess());
  afterEach(() => {
    vi.restoreAllMocks();
    parent?.kill('SIGKILL');
  });

  it('finds a child and its own child, signals each, and tells who still runs', async () => {
    const started = await parentWithChild();
    parent = started.parent;
    const { child } = started;
    const tree = processTree(parent.pid!);
    expect(tree[0]).toBe(parent.pid);
    expect(tree).toContain(child);
    expect(processTree(child)).toEqual([child]);
    expect([isAlive(parent.pid!), isAlive(child)]).toEqual([true, true]);

    signalEach([...tree].reverse(), 'SIGKILL');
    await eventually('both to end', () =>
      parent!.signalCode === 'SIGKILL' && !isAlive(child) ? true : undefined,
    );
    // A process gone is skipped, not an error.
    expect(() => signalEach([child], 'SIGTERM')).not.toThrow();
    expect(processTree(child)).toEqual([child]);
  });

  it("reads processes only: /proc/self, this process's own stat, counts for nothing", () => {
    const tree = processTree(process.ppid);
    expect(tree).toContain(process.pid);
    expect(tree.filter((pid) => !Number.isInteger(pid))).toEqual([]);
  });

  it('says this process runs', () => {
    expect(isAlive(process.pid)).toBe(true);
  });
});
