import { spawnSync } from 'node:child_process';
import { mkdir, readdir, rm, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import { isAbandoned, removeAbandoned } from './abandoned-folders.js';

const gone = (): number => spawnSync('true').pid;
const minutesAgo = (minutes: number): number =>
  (Date.now() - minutes * 60_000) / 1000;

describe('abandoned folders', () => {
  const parent = useTempFolder('abandoned-folders-');

  it('are those whose every recorded process has ended', async () => {
    await expect(isAbandoned(parent(), [gone()], 0)).resolves.toBe(true);
    await expect(isAbandoned(parent(), [gone(), process.pid], 0)).resolves.toBe(
      false,
    );
  });

  it('with nothing recorded, are those older than the time given, and never a missing one', async () => {
    await utimes(parent(), minutesAgo(2), minutesAgo(2));
    await expect(isAbandoned(parent(), [undefined], 60_000)).resolves.toBe(
      true,
    );
    await expect(isAbandoned(parent(), [], 180_000)).resolves.toBe(false);
    await expect(isAbandoned(join(parent(), 'missing'), [], 0)).resolves.toBe(
      false,
    );
  });

  it('with nothing recorded, are not abandoned at exactly the time given, only past it', async () => {
    // Whole seconds: the folder's time in milliseconds is then exact.
    const made = Math.floor(Date.now() / 1000) - 60;
    await utimes(parent(), made, made);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(made * 1000 + 30_000);
      await expect(isAbandoned(parent(), [], 30_000)).resolves.toBe(false);
      vi.setSystemTime(made * 1000 + 30_001);
      await expect(isAbandoned(parent(), [], 30_000)).resolves.toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('may be gone by the time they are removed (another sweep took them)', async () => {
    const dead = gone();
    await mkdir(join(parent(), `copying-${dead}`));
    await removeAbandoned(parent(), 'copying-', {
      owners: async (folder) => {
        // Between reading the owners and removing the folder, another sweep removes it.
        await rm(folder, { recursive: true });
        return [dead];
      },
      unrecordedForMs: Number.POSITIVE_INFINITY,
    });
    expect(await readdir(parent())).toEqual([]);
  });

  it('are removed when their name has the prefix, and only then', async () => {
    const dead = gone();
    for (const name of [
      `copying-${dead}`,
      `copying-${process.pid}`,
      `ready-${dead}`,
    ])
      await mkdir(join(parent(), name));
    await removeAbandoned(parent(), 'copying-', {
      owners: (_, name) => [Number(name.split('-')[1])],
      unrecordedForMs: Number.POSITIVE_INFINITY,
    });
    expect((await readdir(parent())).sort()).toEqual([
      `copying-${process.pid}`,
      `ready-${dead}`,
    ]);
  });
});
