import { execFileSync } from 'node:child_process';
import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import { copyTree } from './tree-copy.js';

describe('copyTree: `cp -a` of a cluster', () => {
  const folder = useTempFolder('tree-copy-');

  async function tree(): Promise<string> {
    const from = join(folder(), 'from');
    await mkdir(join(from, 'base'), { recursive: true });
    await writeFile(join(from, 'base', '1'), 'rows', { mode: 0o600 });
    await utimes(join(from, 'base', '1'), 1_000, 1_000);
    return from;
  }

  it('copies the whole tree, keeping modes and times', async () => {
    const from = await tree();
    const to = join(folder(), 'to');
    const copy = copyTree(from, to);
    await copy.done;
    const copied = join(to, 'base', '1');
    expect(await readFile(copied, 'utf8')).toBe('rows');
    const { mode, mtimeMs } = await stat(copied);
    expect([mode & 0o777, mtimeMs]).toEqual([0o600, 1_000_000]);
    expect(copy.child.spawnargs).toEqual(['cp', '-a', from, to]);
  });

  it('in the background, at the lowest priority', async () => {
    const from = await tree();
    const to = join(folder(), 'to');
    const copy = copyTree(from, to, { background: true });
    await copy.done;
    expect(await readFile(join(to, 'base', '1'), 'utf8')).toBe('rows');
    expect(copy.child.spawnargs).toEqual([
      'nice',
      '-n',
      '19',
      'cp',
      '-a',
      from,
      to,
    ]);
  });

  it('rejects a failed copy with the command, its exit code and what cp said', async () => {
    const from = join(folder(), 'missing');
    const to = join(folder(), 'to');
    const said = `cp: cannot stat '${from}': No such file or directory`;
    await expect(copyTree(from, to).done).rejects.toHaveProperty(
      'message',
      `cp -a ${from} ${to} failed (1): ${said}`,
    );
    await expect(
      copyTree(from, to, { background: true }).done,
    ).rejects.toHaveProperty(
      'message',
      `nice -n 19 cp -a ${from} ${to} failed (1): ${said}`,
    );
  });

  it('rejects a copy stopped by a signal, naming the signal', async () => {
    const from = join(folder(), 'file');
    await writeFile(from, 'rows');
    // Onto a FIFO no one reads: cp waits to write until it is stopped.
    const to = join(folder(), 'fifo');
    execFileSync('mkfifo', [to]);
    const copy = copyTree(from, to);
    copy.child.kill('SIGKILL');
    await expect(copy.done).rejects.toHaveProperty(
      'message',
      `cp -a ${from} ${to} failed (SIGKILL): `,
    );
  });
});
