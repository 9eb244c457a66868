import { Balancer, ensureHaproxy } from '../support/reliability/haproxy.js';
import { LOAD_UNDER_WAY, Ledger } from '../support/reliability/ledger.js';
import { startLedgeredLoad } from '../support/reliability/load.js';
import {
  type RunningService,
  startService,
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

  /**
   * Two replicas behind HAProxy (`plain`: without the documented retries) under CLIENTS
   * clients: `scenario` runs with the load under way, and the load goes on until more
   * creates are acknowledged after it. Everything is stopped, then the ledger verified.
   */
  async function underLoadBehindBalancer(
    label: string,
    plain: boolean,
    scenario: (
      replicas: RunningService[],
      balancer: Balancer,
      ledger: Ledger,
    ) => Promise<void>,
  ) {
    const replicas = await Promise.all([
      startService(own.postgres.url, REPLICA_SETTINGS),
      startService(own.postgres.url, REPLICA_SETTINGS),
    ]);
    const balancer = await Balancer.start(
      haproxy,
      [replicas[0].port, replicas[1].port],
      { plain },
    );
    const { ledger, load } = startLedgeredLoad(label, {
      baseUrl: balancer.url,
      concurrency: CLIENTS,
    });
    try {
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
      await scenario(replicas, balancer, ledger);
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
    } finally {
      await load.stop();
      await balancer.stop();
      await Promise.all(replicas.map((replica) => replica.process.stop()));
    }
    return { ledger, figures: await ledger.verify(own.postgres.url) };
  }

  /** Clients saw only 200s, and every create sent was acknowledged and stored once. */
  function expectEveryCreateAcknowledged(
    ledger: Ledger,
    figures: Awaited<ReturnType<Ledger['verify']>>,
  ) {
    expect(clientErrors(ledger)).toEqual({});
    expect(figures.acknowledged).toBe(figures.sent);
    expect(figures.lost).toBe(0);
    expect(figures.duplicated).toBe(0);
  }

  it('rolling restart with SIGTERM, plain balancer configuration: clients see only 200s, each replica exits 0', async () => {
    const exitCodes: (number | null)[] = [];
    const { ledger, figures } = await underLoadBehindBalancer(
      'rolling restart behind HAProxy (no retries)',
      true,
      async (replicas, balancer) => {
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
      },
    );

    process.stdout.write(
      `[reliability] rolling restart: client errors ${JSON.stringify(clientErrors(ledger))}, replica exit codes ${JSON.stringify(exitCodes)}\n`,
    );
    expect(exitCodes).toEqual([0, 0]);
    expectEveryCreateAcknowledged(ledger, figures);
  });

  it('one replica SIGKILLed under load, with the documented retries: clients see only 200s, nothing acknowledged is lost', async () => {
    const { ledger, figures } = await underLoadBehindBalancer(
      'replica killed behind HAProxy (with retries)',
      false,
      async (replicas, balancer, ledger) => {
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
      },
    );

    process.stdout.write(
      `[reliability] replica killed: client errors ${JSON.stringify(clientErrors(ledger))}\n`,
    );
    expectEveryCreateAcknowledged(ledger, figures);
  });
});
