import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  processNaming,
  signalsOnlyBelowThisProcess,
} from '../../../test/support/processes.js';
import { useTempFolder } from '../../../test/support/temp-folder.js';
import { OWNER_FILE as POSTGRES_OWNER_FILE } from '../database/stale-postmaster.js';
import { removeStaleStores } from './stale-stores.js';
import { clusterOf, KEEPER_PID_FILE, STORE_PREFIX } from './store-folder.js';
import { BUILDING_PREFIX } from './template-cluster.js';

/** The pid of a process that has exited. */
async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

describe('removeStaleStores: what killed runs left, never what is in use', () => {
  const temporary = useTempFolder('stale-stores-tmp-');
  const cache = useTempFolder('stale-stores-cache-');
  const tmpdirBefore = process.env.TMPDIR;
  beforeEach(() => {
    // os.tmpdir() reads it on each call: the stores' folder is this test's own.
    process.env.TMPDIR = temporary();
    signalsOnlyBelowThisProcess();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    if (tmpdirBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdirBefore;
  });

  async function folder(
    parent: string,
    name: string,
    owners: Record<string, number> = {},
  ): Promise<void> {
    await mkdir(join(parent, name));
    for (const [file, pid] of Object.entries(owners))
      await writeFile(join(parent, name, file), `${pid}\n`);
  }

  it('removes store folders and template builds whose every recorded process is gone, and keeps the rest', async () => {
    const gone = await endedPid();
    await folder(temporary(), `${STORE_PREFIX}gone`, {
      [KEEPER_PID_FILE]: gone,
    });
    await folder(temporary(), `${STORE_PREFIX}both-gone`, {
      [KEEPER_PID_FILE]: gone,
      [POSTGRES_OWNER_FILE]: gone,
    });
    await folder(temporary(), `${STORE_PREFIX}kept`, {
      [KEEPER_PID_FILE]: process.pid,
    });
    await folder(temporary(), `${STORE_PREFIX}postgres-owner-runs`, {
      [KEEPER_PID_FILE]: gone,
      [POSTGRES_OWNER_FILE]: process.pid,
    });
    await folder(temporary(), 'another-program', { [KEEPER_PID_FILE]: gone });
    await folder(cache(), `${BUILDING_PREFIX}gone`, {
      [POSTGRES_OWNER_FILE]: gone,
    });
    await folder(cache(), `${BUILDING_PREFIX}running`, {
      [POSTGRES_OWNER_FILE]: process.pid,
    });
    await folder(cache(), 'template', { [POSTGRES_OWNER_FILE]: gone });

    await removeStaleStores(cache());

    expect((await readdir(temporary())).sort()).toEqual([
      'another-program',
      `${STORE_PREFIX}kept`,
      `${STORE_PREFIX}postgres-owner-runs`,
    ]);
    expect((await readdir(cache())).sort()).toEqual([
      `${BUILDING_PREFIX}running`,
      'template',
    ]);
  });

  it('removes a folder with no process recorded only once it is ten minutes old', async () => {
    await folder(temporary(), `${STORE_PREFIX}starting`);
    await folder(temporary(), `${STORE_PREFIX}orphan`);
    await folder(temporary(), `${STORE_PREFIX}nine-minutes`);
    const at = (minutes: number) => (Date.now() - minutes * 60_000) / 1000;
    await utimes(join(temporary(), `${STORE_PREFIX}orphan`), at(11), at(11));
    await utimes(
      join(temporary(), `${STORE_PREFIX}nine-minutes`),
      at(9),
      at(9),
    );

    await removeStaleStores(cache());

    expect((await readdir(temporary())).sort()).toEqual([
      `${STORE_PREFIX}nine-minutes`,
      `${STORE_PREFIX}starting`,
    ]);
  });

  it("continues a stale store's paused postmaster, stops it, then removes the folder", async () => {
    const gone = await endedPid();
    const name = `${STORE_PREFIX}paused`;
    await folder(temporary(), name, {
      [KEEPER_PID_FILE]: gone,
      [POSTGRES_OWNER_FILE]: gone,
    });
    // A postmaster a fault had stopped when its run was killed; as PostgreSQL, it handles
    // SIGINT (a fast shutdown), which a stopped process only gets once continued.
    const postmaster = await processNaming(
      'postgres',
      "process.on('SIGINT', () => process.exit(0))",
    );
    const exited = once(postmaster, 'exit');
    await mkdir(clusterOf(join(temporary(), name)));
    await writeFile(
      join(clusterOf(join(temporary(), name)), 'postmaster.pid'),
      `${postmaster.pid}\n`,
    );
    postmaster.kill('SIGSTOP');
    try {
      await removeStaleStores(cache());
      expect(await exited).toEqual([0, null]);
      expect(await readdir(temporary())).toEqual([]);
    } finally {
      postmaster.kill('SIGKILL');
    }
  });

  it('does nothing where the folders do not exist', async () => {
    process.env.TMPDIR = join(temporary(), 'missing');
    await expect(
      removeStaleStores(join(cache(), 'missing')),
    ).resolves.toBeUndefined();
  });
});
