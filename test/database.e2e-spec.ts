import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/service/database/data-source-options.js';
import { runMigrations } from '../src/service/database/migration-runner.js';
import { type RunningApp, startApp } from './support/app.js';
import { errorBody, expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { createScratchDatabase } from './support/scratch-database.js';
import { storedPlant } from './support/stored-plants.js';
import {
  startTestPostgres,
  type TestPostgres,
} from './support/test-postgres.js';

const SETTINGS = {
  DATABASE_POOL_SIZE: 4,
  DATABASE_CONNECT_TIMEOUT_MS: 2_000,
  DATABASE_QUERY_TIMEOUT_MS: 5_000,
};

async function eventually<T>(
  attempt: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// A database of its own, since these tests stop it and break its schema.
describe('the service and its database', () => {
  let postgres: TestPostgres;
  let service: RunningApp;

  beforeAll(async () => {
    postgres = await startTestPostgres('outage');
    service = await startApp({
      DATABASE_URL: postgres.url,
      TOKEN_SYNC_MAX_STALENESS_MS: '1000',
    });
  });
  afterAll(async () => {
    await service?.close();
    await postgres?.stop();
  });

  it('reports healthy while the database answers', async () => {
    const answer = await send(`${service.url}/health`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok', instance: expect.any(String) });
  });

  it('answers 503 quickly while the database is down, and recovers by itself', async () => {
    await postgres.stop({ keepData: true });
    try {
      const started = Date.now();
      const down = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Fern'),
      );
      const elapsed = Date.now() - started;

      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('2');
      expect(down.body).toEqual(
        errorBody(503, 'The database is unavailable; retry later.'),
      );
      // Bounded by the connect timeout (2 s): never a hang. Generous for a loaded machine.
      expect(elapsed).toBeLessThan(10_000);

      // A managed token is judged from memory: an unknown one is still 401 with no
      // database; once the store has been out of touch past its bound, 503 instead.
      const managed = () =>
        postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token: `pst_${'x'.repeat(43)}`,
        });
      const stale = await eventually(
        managed,
        (answer) => answer.status !== 401,
        10_000,
      );
      expect(stale.status).toBe(503);
      expect(stale.headers.get('retry-after')).toBe('2');
      expect(stale.body).toEqual(
        errorBody(
          503,
          'Managed tokens cannot be checked right now; retry later.',
        ),
      );

      // The probe may reuse a result up to 1 s old before it pings again.
      const health = await eventually(
        () => send(`${service.url}/health`),
        (answer) => answer.status === 503,
        5_000,
      );
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).toBe('2');
      expect(health.body).toEqual(errorBody(503));
      // Readiness stays 200 (issue 42): a database down is down for every replica, and
      // the creates are better answered by this 503 than by a balancer's own page.
      expect((await send(`${service.url}/health/ready`)).status).toBe(200);
    } finally {
      await postgres.restart();
    }

    const id = uniqueId();
    const back = await eventually(
      () => postPlant(service.url, newPlantJson(id, 'Fern')),
      (answer) => answer.status === 200,
      10_000,
    );
    expect(back.status).toBe(200);
    expect(await storedPlant(service.dataSource, id)).toEqual({
      id: id.toString(),
      name: 'Fern',
      tag: null,
    });
  });

  it('answers 500 for an unexpected failure: a generic message, no detail, a request id', async () => {
    await service.dataSource.query('ALTER TABLE plants RENAME TO plants_moved');
    try {
      const answer = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Fern'),
        {
          headers: { 'X-Request-Id': 'trace-500-check' },
        },
      );

      expectErrorAnswer(
        answer,
        500,
        'The server failed to handle the request; it has been logged.',
      );
      expect(answer.text).not.toMatch(
        /plants|relation|select|insert|at \w+ \(/i,
      );
      expect(answer.headers.get('x-request-id')).toBe('trace-500-check');
    } finally {
      await service.dataSource.query(
        'ALTER TABLE plants_moved RENAME TO plants',
      );
    }
  });

  it('migrates once when several replicas start together (advisory lock)', async () => {
    const url = await createScratchDatabase(postgres.url, 'migrations');
    const options = dataSourceOptions(url, SETTINGS);

    const applied = await Promise.all([
      runMigrations(options),
      runMigrations(options),
      runMigrations(options),
    ]);

    expect(applied.flat()).toEqual([
      'CreatePlants1763769600000',
      'CreateApiTokens1763856000000',
      'NotifyApiTokenChanges1764000000000',
      'CreateCommitProbe1795392000000',
    ]);
    const check = await new DataSource(options).initialize();
    try {
      const tables = (await check.query(
        "SELECT count(*)::int AS count FROM information_schema.tables WHERE table_name = 'plants'",
      )) as [{ count: number }];
      expect(tables[0].count).toBe(1);
      expect(await runMigrations(options)).toEqual([]);
    } finally {
      await check.destroy();
    }
  });
});
