import { spawnSync } from 'node:child_process';
import {
  chmod,
  mkdir,
  readdir,
  readFile,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { basename, join } from 'node:path';
import { watchedClock } from '../../../test/support/clock.js';
import {
  kitTemplate,
  templateWithoutConfiguration,
} from '../../../test/support/kit-template.js';
import { eventually } from '../../../test/support/poll.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import {
  CLUSTER_FOLDER,
  defaultCacheDir,
  makeCacheDir,
  PASSWORD_FILE,
  templateCluster,
} from './template-cluster.js';

const modeOf = async (path: string): Promise<number> =>
  (await stat(path)).mode & 0o7777;

describe('the cache folder', () => {
  const folder = useTempFolder('template-cluster-cache-');

  it("is the user's own in the temporary directory", () => {
    expect(defaultCacheDir()).toBe(
      join(tmpdir(), `plant-store-cache-${userInfo().uid}`),
    );
  });

  it('is made, with its parents, traversable by others (PostgreSQL runs as postgres under root)', async () => {
    const cache = join(folder(), 'parent', 'cache');
    await makeCacheDir(cache);
    expect(await modeOf(cache)).toBe(0o711);
    // Made already (by an older version, say) without the bit: as root, it is added.
    const older = join(folder(), 'older');
    await mkdir(older, { mode: 0o700 });
    await chmod(older, 0o700);
    await makeCacheDir(older);
    expect(await modeOf(older)).toBe(userInfo().uid === 0 ? 0o701 : 0o700);
  });
});

describe('templateCluster: the cluster every store copies', () => {
  const cache = useTempFolder('template-cluster-');
  /** The template's folder name on this machine: the embedded PostgreSQL's version and the format. */
  const templateName = async (): Promise<string> =>
    basename(await kitTemplate());

  it('is built once, by the process that takes the lock, even from a dead builder, and then reused', async () => {
    await makeCacheDir(cache());
    const name = await templateName();
    expect(name).toMatch(/^postgres-\d+\.\d+\.\d+\S*-v2$/);
    // A lock left by a builder killed mid-build.
    const lock = join(cache(), `${name}.lock`);
    await mkdir(lock);
    await writeFile(join(lock, 'pid'), `${spawnSync('true').pid}\n`);

    const building = templateCluster(cache());
    // While it builds: the lock names this process, the cluster grows in a folder naming it.
    const during = await eventually('the build under way', async () => {
      const pid = await readFile(join(lock, 'pid'), 'utf8').catch(() => '');
      const folders = await readdir(cache());
      return pid === `${process.pid}\n` &&
        folders.some((entry) => entry.startsWith(`building-${process.pid}-`))
        ? folders
        : undefined;
    });
    expect(during).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^building-\d+-[0-9a-f]{8}$/),
      ]),
    );
    const template = await building;

    expect(template).toBe(join(cache(), name));
    // The cluster and its password; nothing of the build is left.
    expect((await readdir(template)).sort()).toEqual([
      CLUSTER_FOLDER,
      PASSWORD_FILE,
    ]);
    expect(await readdir(cache())).toEqual([name]);
    const cluster = join(template, CLUSTER_FOLDER);
    expect(await readFile(join(cluster, 'PG_VERSION'), 'utf8')).toMatch(
      /^\d+\n$/,
    );
    // Only template1 and the store's database: postgres and template0 are dropped.
    expect(await readdir(join(cluster, 'base'))).toHaveLength(2);
    // No owner: a copy's postmaster is its keeper's.
    expect(await readdir(cluster)).not.toContain('postgres-owner.pid');

    const built = (await stat(join(cluster, 'PG_VERSION'))).mtimeMs;
    await expect(templateCluster(cache())).resolves.toBe(template);
    expect((await stat(join(cluster, 'PG_VERSION'))).mtimeMs).toBe(built);
  }, 120_000);

  afterEach(() => vi.restoreAllMocks());

  /** A lock held by a builder that runs (this very process stands for it). */
  async function heldLock(): Promise<{ template: string; lock: string }> {
    const template = join(cache(), await templateName());
    const lock = `${template}.lock`;
    await mkdir(lock);
    await writeFile(join(lock, 'pid'), `${process.pid}\n`);
    return { template, lock };
  }

  it("waits while another process builds it, and leaves that process's lock alone", async () => {
    const { template, lock } = await heldLock();
    const clock = watchedClock();
    const waiting = templateCluster(cache());
    await clock.turns(2);
    // It neither built nor took the lock.
    expect(await readdir(cache())).toEqual([basename(lock)]);

    // The other builder's rename: the template is whole at once.
    await templateWithoutConfiguration(template);
    await expect(waiting).resolves.toBe(template);
    expect(await readFile(join(lock, 'pid'), 'utf8')).toBe(`${process.pid}\n`);
  });

  it('gives up after 180 s of another process building, naming the lock to remove', async () => {
    const { lock } = await heldLock();
    const clock = watchedClock();
    const waiting = templateCluster(cache());
    await clock.turns(1);
    clock.advance(181_000);
    await expect(waiting).rejects.toThrow(
      new Error(
        `No template cluster in ${cache()} after 180 s: ` +
          `is another process stuck building it? Remove ${lock} to build anew.`,
      ),
    );
  });
});
