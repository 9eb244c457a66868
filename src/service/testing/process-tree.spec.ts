import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { eventually } from '../../../test/support/poll.js';
import { isAlive } from '../database/pid-files.js';
import { processTree, signalEach } from './process-tree.js';

describe('process-tree: a process and those below it, from /proc', () => {
  let parent: ChildProcess | undefined;
  afterEach(() => {
    parent?.kill('SIGKILL');
  });

  it('finds a child and its own child, signals each, and tells who still runs', async () => {
    // A parent that starts a child and prints its pid.
    parent = spawn(
      process.execPath,
      [
        '-e',
        `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
         process.stdout.write(c.pid + "\\n"); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
    const child = Number(line.toString().trim());
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

  it('says this process runs', () => {
    expect(isAlive(process.pid)).toBe(true);
  });
});
