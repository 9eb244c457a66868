import { Balancer, ensureHaproxy } from '../support/reliability/haproxy.js';
import { LOAD_UNDER_WAY, Ledger } from '../support/reliability/ledger.js';
import { startLoad } from '../support/reliability/load.js';
import {
  type RunningService,
  startService,
  TOKEN,
  useTestPostgres,
} from '../support/reliability/scenario.js';

// Longer than HAProxy's inter x fall (1 s, docker/haproxy/haproxy.cfg), with room for a
// loaded machine: the balancer must see readiness fail before the listener closes.
const REPLICA_SETTINGS = {
  SHUTDOWN_DELAY_MS: '3000',
  SHUTDOWN_TIMEOUT_MS: '10000',
};
const CLIENTS = 16;

/** What clients saw besides a 200: statuses and connection errors, counted. */
function clientErrors(ledger: Ledger): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { outcome } of ledger.attempts) {
    const key =
      outcome.kind === 'no-answer'
        ? outcome.error
        : outcome.status === 200
          ? undefined
          : String(outcome.status);
    if (key !== undefined) counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('scale-out: two replicas behind HAProxy', () => {
  let haproxy: string;

  beforeAll(async () => {
    haproxy = await ensureHaproxy();
  }, 360_000);
  const own = useTestPostgres('reliability-scale-out');

  async function startReplicas(): Promise<RunningService[]> {
    return Promise.all([
      startService(own.postgres.url, REPLICA_SETTINGS),
      startService(own.postgres.url, REPLICA_SETTINGS),
    ]);
  }

  it('rolling restart with SIGTERM, plain balancer configuration: clients see only 200s, each replica exits 0', async () => {
    const replicas = await startReplicas();
    const balancer = await Balancer.start(
      haproxy,
      [replicas[0].port, replicas[1].port],
      { plain: true },
    );
    const ledger = new Ledger('rolling restart behind HAProxy (no retries)');
    const load = startLoad({
      baseUrl: balancer.url,
      token: TOKEN,
      ledger,
      concurrency: CLIENTS,
    });
    const exitCodes: (number | null)[] = [];
    try {
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
      for (const [index, replica] of replicas.entries()) {
        replica.process.signal('SIGTERM');
        exitCodes.push(await replica.process.exitCode());
        await balancer.untilServers('DOWN', `replica${index + 1}`);
        replicas[index] = await startService(
          own.postgres.url,
          REPLICA_SETTINGS,
          replica.port,
        );
        await balancer.untilServers('UP', `replica${index + 1}`);
      }
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
    } finally {
      await load.stop();
      await balancer.stop();
      await Promise.all(replicas.map((replica) => replica.process.stop()));
    }

    const figures = await ledger.verify(own.postgres.url);
    process.stdout.write(
      `[reliability] rolling restart: client errors ${JSON.stringify(clientErrors(ledger))}, replica exit codes ${JSON.stringify(exitCodes)}\n`,
    );
    expect(exitCodes).toEqual([0, 0]);
    expect(clientErrors(ledger)).toEqual({});
    expect(figures.acknowledged).toBe(figures.sent);
    expect(figures.lost).toBe(0);
    expect(figures.duplicated).toBe(0);
  });

  it('one replica SIGKILLed under load, with the documented retries: clients see only 200s, nothing acknowledged is lost', async () => {
    const replicas = await startReplicas();
    const balancer = await Balancer.start(
      haproxy,
      [replicas[0].port, replicas[1].port],
      { plain: false },
    );
    const ledger = new Ledger('replica killed behind HAProxy (with retries)');
    const load = startLoad({
      baseUrl: balancer.url,
      token: TOKEN,
      ledger,
      concurrency: CLIENTS,
    });
    try {
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
      replicas[0].process.signal('SIGKILL');
      await replicas[0].process.exitCode();
      await balancer.untilServers('DOWN', 'replica1');
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
      replicas[0] = await startService(
        own.postgres.url,
        REPLICA_SETTINGS,
        replicas[0].port,
      );
      await balancer.untilServers('UP', 'replica1');
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
    } finally {
      await load.stop();
      await balancer.stop();
      await Promise.all(replicas.map((replica) => replica.process.stop()));
    }

    const figures = await ledger.verify(own.postgres.url);
    process.stdout.write(
      `[reliability] replica killed: client errors ${JSON.stringify(clientErrors(ledger))}\n`,
    );
    expect(clientErrors(ledger)).toEqual({});
    expect(figures.acknowledged).toBe(figures.sent);
    expect(figures.lost).toBe(0);
    expect(figures.duplicated).toBe(0);
  });
});
