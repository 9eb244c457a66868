import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import { isAlive, pidIn, pidOf } from './pid-files.js';

describe('pid-files: a pid read from a file, and whether it runs', () => {
  const folder = useTempFolder('pids-');

  it('reads the positive integer a text starts with, and nothing else', () => {
    expect(
      [
        '123',
        '123\n/data\n5432\n',
        ' 42',
        '7abc',
        '0',
        '-5',
        '',
        'pid',
        '\n9',
      ].map(pidOf),
    ).toEqual([123, 123, 42, 7, undefined, undefined, undefined, undefined, 9]);
  });

  it("reads a file's pid, and undefined for a missing or empty file", async () => {
    await writeFile(join(folder(), 'postmaster.pid'), '4321\n/data\n');
    await writeFile(join(folder(), 'empty'), '');
    expect(
      await Promise.all(
        ['postmaster.pid', 'empty', 'missing'].map((name) =>
          pidIn(join(folder(), name)),
        ),
      ),
    ).toEqual([4321, undefined, undefined]);
  });

  it('tells a running process from one that has ended', async () => {
    expect(isAlive(process.pid)).toBe(true);
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(child, 'exit');
    expect(isAlive(child.pid!)).toBe(false);
  });
});
