import pg from 'pg';
import { DATABASE_503, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { useServiceOnOwnPostgres } from './support/own-postgres.js';
import { eventually } from './support/poll.js';

/** Sets a server parameter on `url`'s PostgreSQL and reloads its configuration. */
async function setOnServer(url: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(statement);
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
}

// A primary that answers queries but holds every commit, as one in strict synchronous
// mode does while no standby is attached: synchronous_standby_names names a standby that
// never comes. A database of its own, since this test holds its commits.
describe('a database that answers but cannot commit', () => {
  const own = useServiceOnOwnPostgres('commits-held', {
    // Far longer than a refusal takes: a create that waited for it would show.
    DATABASE_REQUEST_TIMEOUT_MS: '30000',
  });

  it('says so in /health, stays ready, refuses creates at once naming the database, and creates again once commits flow', async () => {
    const { postgres, service } = own;
    const { url } = service;
    expect((await send(`${url}/health/ready`)).status).toBe(200);
    expect(
      (await postPlant(url, newPlantJson(uniqueId(), 'Before'))).status,
    ).toBe(200);

    await setOnServer(
      postgres.url,
      "ALTER SYSTEM SET synchronous_standby_names = 'never_attached'",
    );
    try {
      // SELECT 1 is still answered: /health must say 503 all the same.
      const unhealthy = await eventually('/health to turn 503', async () => {
        const answer = await send(`${url}/health`);
        return answer.status === 503 ? answer : undefined;
      });
      expect(unhealthy.body).toEqual(DATABASE_503);
      expect(unhealthy.headers.get('retry-after')).toBe('2');
      // Readiness stays 200 (issue 42): the database is every replica's, and a balancer
      // left with none ready would answer in the service's place, without the Error body.
      expect((await send(`${url}/health/ready`)).status).toBe(200);

      const started = performance.now();
      const refused = await postPlant(url, newPlantJson(uniqueId(), 'Held'));
      const tookMs = performance.now() - started;
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 503,
        body: DATABASE_503,
      });
      // Refused without waiting for the database: well before DATABASE_REQUEST_TIMEOUT_MS.
      expect(tookMs).toBeLessThan(30_000 / 2);
    } finally {
      await setOnServer(
        postgres.url,
        'ALTER SYSTEM RESET synchronous_standby_names',
      );
    }

    await eventually('/health to turn 200', async () =>
      (await send(`${url}/health`)).status === 200 ? true : undefined,
    );
    const after = await postPlant(url, newPlantJson(uniqueId(), 'After'));
    expect({ status: after.status, body: after.body }).toEqual({
      status: 200,
      body: { name: 'After' },
    });
  });
});
