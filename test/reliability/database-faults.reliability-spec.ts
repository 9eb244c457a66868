import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Ledger } from '../support/reliability/ledger.js';
import { startLoad } from '../support/reliability/load.js';
import {
  recoveryTime,
  type RunningService,
  type TestPostgres,
  TOKEN,
  useServiceOnTestPostgres,
} from '../support/reliability/scenario.js';

const CONCURRENCY = 8;

/**
 * Invariants 1-3 from the database, and what a database fault must never cause: a 500, a
 * failure without an Error body, a request left without an answer (the service stays up),
 * or the service going down.
 */
async function expectInvariants(
  ledger: Ledger,
  postgres: TestPostgres,
  service: RunningService,
): Promise<void> {
  const figures = await ledger.verify(postgres.url);
  expect(figures.acknowledged).toBeGreaterThan(0);
  expect(figures.lost).toBe(0);
  expect(figures.duplicated).toBe(0);
  const serverErrors = ledger
    .answered()
    .filter(({ outcome }) => outcome.status >= 500 && outcome.status !== 503);
  expect(serverErrors.map(({ outcome }) => outcome)).toEqual([]);
  for (const { outcome } of ledger
    .answered()
    .filter(({ outcome }) => outcome.status !== 200)) {
    expect(outcome.body).toEqual({
      error: outcome.status,
      message: expect.any(String),
    });
  }
  expect(
    ledger.attempts.filter(({ outcome }) => outcome.kind === 'no-answer'),
  ).toEqual([]);
  expect(service.process.isRunning).toBe(true);
}

describe('database faults under load', () => {
  const own = useServiceOnTestPostgres(
    'reliability-db',
    { DATABASE_CONNECT_TIMEOUT_MS: '2000' },
    { each: true },
  );

  /** The test's service and its PostgreSQL, closed-loop creates started, each attempt in a ledger named `name`. */
  function underLoad(name: string) {
    const { postgres, service } = own;
    const ledger = new Ledger(name);
    const load = startLoad({
      baseUrl: service.url,
      token: TOKEN,
      ledger,
      concurrency: CONCURRENCY,
    });
    return { postgres, service, ledger, load };
  }

  it('database killed (SIGKILL) mid-load: 503s within 3 s while down, nothing acknowledged is lost', async () => {
    const { postgres, service, ledger, load } = underLoad(
      'database killed mid-load',
    );
    await sleep(1_500);

    await postgres.crash();
    // From here until start() the database is certainly gone.
    const downAt = ledger.now();
    await sleep(3_000);
    const upAt = ledger.now();
    await postgres.start();
    const recoveredIn = await recoveryTime(service.url);
    await sleep(500);
    await load.stop();

    const whileDown = ledger
      .answered()
      .filter(({ at, outcome }) => at >= downAt && at + outcome.ms <= upAt);
    process.stdout.write(
      `[reliability] database killed mid-load: ${whileDown.length} answers while down, ` +
        `slowest ${Math.round(Math.max(...whileDown.map(({ outcome }) => outcome.ms)))} ms; recovered in ${recoveredIn} ms\n`,
    );
    expect(whileDown.length).toBeGreaterThan(0);
    for (const { outcome } of whileDown) {
      expect(outcome.status).toBe(503);
      expect(outcome.ms).toBeLessThan(3_000);
    }
    await expectInvariants(ledger, postgres, service);
  });

  it('database restarted cleanly under load: the pool reconnects, nothing acknowledged is lost', async () => {
    const { postgres, service, ledger, load } = underLoad(
      'database restarted cleanly under load',
    );
    await sleep(1_500);
    await postgres.restart();
    const recoveredIn = await recoveryTime(service.url);
    await sleep(1_000);
    await load.stop();

    process.stdout.write(
      `[reliability] database restarted cleanly: recovered in ${recoveredIn} ms\n`,
    );
    await expectInvariants(ledger, postgres, service);
  });

  it('connections severed from the database side (pg_terminate_backend): the pool recovers', async () => {
    const { postgres, service, ledger, load } = underLoad(
      'connections severed',
    );
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    let severed = 0;
    try {
      await sleep(1_000);
      for (let round = 0; round < 10; round += 1) {
        const result = await admin.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'plant-store'",
        );
        severed += result.rowCount ?? 0;
        await sleep(300);
      }
    } finally {
      await admin.end();
    }
    const recoveredIn = await recoveryTime(service.url);
    await sleep(1_000);
    await load.stop();

    process.stdout.write(
      `[reliability] connections severed: ${severed} backends terminated; recovered in ${recoveredIn} ms\n`,
    );
    expect(severed).toBeGreaterThan(0);
    await expectInvariants(ledger, postgres, service);
  });
});
