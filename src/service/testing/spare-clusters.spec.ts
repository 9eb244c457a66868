import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../../test/support/poll.js';
import { processTree } from './process-tree.js';
import {
  claimSpare,
  SPARES_KEPT,
  SpareCopy,
  sparesOf,
} from './spare-clusters.js';
import { CLUSTER_FOLDER } from './template-cluster.js';

let root: string;
let template: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'spare-clusters-spec-'));
  template = join(root, 'template');
  await mkdir(join(template, CLUSTER_FOLDER, 'base'), { recursive: true });
  await writeFile(join(template, CLUSTER_FOLDER, 'PG_VERSION'), '18\n');
  await writeFile(join(template, CLUSTER_FOLDER, 'base', '1'), 'rows');
});
afterEach(() => rm(root, { recursive: true, force: true }));

const spares = (): Promise<string[]> =>
  readdir(sparesOf(template)).then((names) => names.sort());

describe('spare clusters', () => {
  it('claims nothing before a spare was made', async () => {
    expect(await claimSpare(template, join(root, 'cluster'))).toBe(false);
  });

  it('makes a copy of the template that a start then moves into place, once', async () => {
    const copy = await SpareCopy.begin(template);
    await copy?.done;
    expect(await spares()).toEqual([expect.stringMatching(/^ready-\d+-/)]);

    const cluster = join(root, 'cluster');
    expect(await claimSpare(template, cluster)).toBe(true);
    expect(await readFile(join(cluster, 'base', '1'), 'utf8')).toBe('rows');
    expect(await spares()).toEqual([]);
    expect(await claimSpare(template, join(root, 'another'))).toBe(false);
  });

  it('claims no spare it cannot move (not one another start took), and leaves it ready', async () => {
    const copy = await SpareCopy.begin(template);
    await copy?.done;
    // A folder in the way: the move fails with ENOTEMPTY, as across file systems with EXDEV.
    const cluster = join(root, 'cluster');
    await mkdir(cluster);
    await writeFile(join(cluster, 'in-the-way'), '');
    expect(await claimSpare(template, cluster)).toBe(false);
    expect(await spares()).toEqual([expect.stringMatching(/^ready-\d+-/)]);
  });

  it(`keeps ${SPARES_KEPT} at most, counting those being made`, async () => {
    for (let made = 0; made < SPARES_KEPT; made += 1)
      await (
        await SpareCopy.begin(template)
      )?.done;
    expect(await spares()).toHaveLength(SPARES_KEPT);
    expect(await SpareCopy.begin(template)).toBeUndefined();
  });

  it('removes a copy left by a keeper that died, and counts it no more', async () => {
    const gone = spawnSync('true').pid;
    await mkdir(join(sparesOf(template), `copying-${gone}-0000`), {
      recursive: true,
    });
    for (let made = 1; made < SPARES_KEPT; made += 1)
      await (
        await SpareCopy.begin(template)
      )?.done;
    const copy = await SpareCopy.begin(template);
    expect(copy).toBeDefined();
    await copy?.done;
    expect(await spares()).toEqual(
      Array.from({ length: SPARES_KEPT }, () =>
        expect.stringMatching(/^ready-/),
      ),
    );
  });

  it('gives two starts claiming at once a spare each, the one taken first left to the other', async () => {
    for (let made = 0; made < 2; made += 1)
      await (
        await SpareCopy.begin(template)
      )?.done;
    const claimed = await Promise.all(
      ['first', 'second'].map((name) => claimSpare(template, join(root, name))),
    );
    expect(claimed).toEqual([true, true]);
    expect(await spares()).toEqual([]);
  });

  it('claims only a ready spare, never one still being copied', async () => {
    const copying = join(sparesOf(template), `copying-${process.pid}-0000`);
    await mkdir(copying, { recursive: true });
    expect(await claimSpare(template, join(root, 'cluster'))).toBe(false);
    expect(await spares()).toEqual([`copying-${process.pid}-0000`]);
  });

  it("counts a dead keeper's copy out before it compares with the number kept", async () => {
    const gone = spawnSync('true').pid;
    await mkdir(join(sparesOf(template), `copying-${gone}-0000`), {
      recursive: true,
    });
    for (let kept = 1; kept < SPARES_KEPT; kept += 1)
      await mkdir(join(sparesOf(template), `ready-0-${kept}`));
    const copy = await SpareCopy.begin(template);
    expect(copy).toBeDefined();
    await copy?.done;
  });

  it('leaves nothing of a copy that failed', async () => {
    await rm(join(template, CLUSTER_FOLDER), { recursive: true });
    await (
      await SpareCopy.begin(template)
    )?.done;
    expect(await spares()).toEqual([]);
  });

  // Copies at nice 19: on a busy machine one takes seconds, and a test waits for up to two.
  describe(
    'of a template slow to copy (2,000 files)',
    { timeout: 90_000 },
    () => {
      beforeEach(async () => {
        const base = join(template, CLUSTER_FOLDER, 'base');
        await Promise.all(
          Array.from({ length: 2_000 }, (_, file) =>
            writeFile(join(base, `r${file}`), 'rows'),
          ),
        );
      });

      it('cancelled, stops the copy and leaves nothing of it', async () => {
        const copy = await SpareCopy.begin(template);
        await copy?.cancel();
        expect(await spares()).toEqual([]);
      });

      it('copies at the lowest priority, so that it slows no start beside it', async () => {
        const copy = await SpareCopy.begin(template);
        // The copy's cp, once `nice` has run it: its nice value (field 19 of its stat).
        const niceness = await eventually(
          'the copy running',
          () => {
            for (const pid of processTree(process.pid)) {
              let stat: string;
              try {
                stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
              } catch {
                continue; // Ended between the listing and the read.
              }
              if (stat.includes('(cp)'))
                return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16];
            }
            return undefined;
          },
          { everyMs: 1 },
        );
        await copy?.cancel();
        expect(niceness).toBe('19');
      });

      it('cancelled midway, leaves nothing of it, or a whole one had it finished first', async () => {
        const copy = await SpareCopy.begin(template);
        await eventually(
          'the copy under way',
          async () => ((await spares()).length > 0 ? true : undefined),
          { everyMs: 1 },
        );
        await copy?.cancel();
        const left = await spares();
        expect(left.filter((name) => !name.startsWith('ready-'))).toEqual([]);
      });

      it('given no time to finish, is cancelled; given enough, is kept', async () => {
        await (await SpareCopy.begin(template))?.finish(0);
        expect(await spares()).toEqual([]);
        await (await SpareCopy.begin(template))?.finish(60_000);
        expect(await spares()).toEqual([expect.stringMatching(/^ready-/)]);
      });
    },
  );

  it('cancelled, leaves no half copy: nothing, or a whole one if it had finished', async () => {
    const copy = await SpareCopy.begin(template);
    await copy?.cancel();
    const left = await spares();
    expect(left.filter((name) => !name.startsWith('ready-'))).toEqual([]);
    for (const name of left)
      expect(
        await readFile(join(sparesOf(template), name, 'base', '1'), 'utf8'),
      ).toBe('rows');
  });
});
