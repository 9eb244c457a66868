import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { eventually } from './support/poll.js';
import { processTree } from '../test-kit/process-tree.mjs';
import { send, getOnNewConnection } from './support/http.js';
import { alive, storeStartedByAnotherProcess } from './support/processes.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

/** The built entry (npm run build): it starts the dist/service/main.js beside it. */
const TESTING_ENTRY = resolve('dist/service/testing/index.js');
type TestingEntry = typeof import('../src/service/testing/index.js');

/** A process's command line, to say which one is left. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .replaceAll('\0', ' ')
      .trim();
  } catch {
    return '(gone)';
  }
}

describe('plant-store/testing: startPlantStore()', () => {
  it('refuses WEB_CONCURRENCY workers it could not count ready (LOG_LEVEL above log), naming the fix', async () => {
    const { startPlantStore } = (await import(TESTING_ENTRY)) as TestingEntry;
    await expect(
      startPlantStore({ env: { WEB_CONCURRENCY: '2', LOG_LEVEL: 'warn' } }),
    ).rejects.toThrow(/WEB_CONCURRENCY above 1 needs LOG_LEVEL log/);
  });

  it('starts this instance on its embedded PostgreSQL with a token, and stop() leaves nothing', async () => {
    const { startPlantStore } = (await import(TESTING_ENTRY)) as TestingEntry;
    const store = await startPlantStore();
    const processes = new Set<number>();
    let dataDir: string | undefined;
    try {
      const health = await send(`${store.url}/health`);
      expect(health.body).toEqual({ status: 'ok', instance: store.instanceId });
      const id = uniqueId();
      const created = await postPlant(store.url, newPlantJson(id, 'Fern'), {
        token: store.token,
      });
      expect(created.status).toBe(200);

      // The suite's own address is not held back after its 401 checks: no 429.
      const refused = await Promise.all(
        Array.from({ length: 40 }, () =>
          postPlant(store.url, newPlantJson(uniqueId(), 'Fern'), {
            token: 'pst_wrong-token-0123456789',
          }).then((answer) => answer.status),
        ),
      );
      expect(new Set(refused)).toEqual(new Set([401]));

      const client = new pg.Client({ connectionString: store.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string }>(
          'SELECT name FROM plants WHERE id = $1::bigint',
          [id.toString()],
        );
        expect(rows).toEqual([{ name: 'Fern' }]);
        const setting = await client.query<{ data_directory: string }>(
          'SHOW data_directory',
        );
        dataDir = join(setting.rows[0].data_directory, '..');
      } finally {
        await client.end();
      }
      // The postmaster (its command names the data folder) and, below it, its backends.
      for (const pid of alive(
        execFileSync('pgrep', ['-f', dataDir], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .map(Number),
      ))
        for (const child of processTree(pid)) processes.add(child);
    } finally {
      await store.stop();
    }
    expect(processes.size).toBeGreaterThan(0);
    expect(alive([...processes])).toEqual([]);
    expect(existsSync(dataDir ?? '/nonexistent-assertion')).toBe(false);
    expect(
      (await fetch(`${store.url}/health`).catch(() => undefined))?.status,
    ).toBe(undefined);
  }, 90_000);

  it.each([
    ['the service and its embedded database', () => ({})],
    [
      'the WEB_CONCURRENCY primary and its workers',
      () => ({
        databaseUrl: inject('databaseUrl'),
        env: { WEB_CONCURRENCY: '2' },
      }),
    ],
  ])(
    'takes %s down within 10 s when the process that started it is SIGKILLed',
    async (_what, options) => {
      const { parent, url } = await storeStartedByAnotherProcess(
        TESTING_ENTRY,
        { options: options(), env: { PATH: process.env.PATH } },
      );
      // Every worker ready, whichever a connection reaches (round robin among the workers).
      for (let connection = 0; connection < 4; connection += 1)
        expect(await getOnNewConnection(`${url}/health`)).toMatchObject({
          status: 200,
        });
      const run = processTree(parent.child.pid ?? 0).slice(1);
      // The service, the postmaster and its backends; or the primary and its two workers.
      expect(run.length).toBeGreaterThanOrEqual(3);

      parent.child.kill('SIGKILL');
      await parent.exited;
      await eventually(
        'no process of the run left',
        () => (alive(run).length === 0 ? true : undefined),
        { timeoutMs: 10_000 },
      ).catch((error: unknown) => {
        // Which is left says where the stop hung (the service, a worker, PostgreSQL).
        throw new Error(
          `${String(error)}: still running ${alive(run)
            .map((pid) => `${pid} ${commandOf(pid)}`)
            .join(', ')}`,
        );
      });
    },
    90_000,
  );
});
