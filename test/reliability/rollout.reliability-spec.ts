import { DATABASE_503 } from '../support/http.js';
import { eventually } from '../support/poll.js';
import { Balancer } from '../support/reliability/haproxy.js';
import {
  type Attempt,
  LOAD_UNDER_WAY,
  Ledger,
} from '../support/reliability/ledger.js';
import { type RunningLoad, startLoad } from '../support/reliability/load.js';
import {
  type Commit,
  createsAgainWithin,
  ensureHaPostgres,
  HaPostgres,
  untilReplayed,
} from '../support/reliability/patroni.js';
import {
  type RunningService,
  spawnService,
  startService,
  TOKEN,
  untilReady,
} from '../support/reliability/scenario.js';
import { backAfter, watch } from '../support/reliability/watch.js';

// Issue 42: a Kubernetes-like rollout (one replica at a time, the next only once the new one
// is ready) while the primary dies, behind HAProxy in HTTP mode with no retries and health
// checks on GET /health/ready (docker/haproxy/haproxy.cfg, PLAIN_BALANCER). Patroni is
// paused across the kill, so that the outage lasts until the replica started in it has
// answered; then it fails over as it would have.
const CLIENTS = 32;
// As ha-postgres: a client that got anything but 200 sends the same plant again.
const RETRY_PAUSE_MS = 100;
// As scale-out: longer than HAProxy's inter x fall (1 s), with room for a loaded machine.
const REPLICA_SETTINGS = {
  SHUTDOWN_DELAY_MS: '3000',
  SHUTDOWN_TIMEOUT_MS: '10000',
};
// The drain (delay + timeout), and 2 s to close the pool and exit after it.
const EXIT_WITHIN_MS = 3_000 + 10_000 + 2_000;
// A replica started during the outage is ready once the database answers: as long as that
// takes (Patroni's promotion, a rewind), polled every 100 ms.
const READY_WITHIN_MS = 120_000;

/** HAProxy's own account of its replicas going DOWN and UP, with the check's reason. */
const serverChanges = (log: string) => [
  ...new Set(
    log
      .split('\n')
      .filter((line) => / is (UP|DOWN)\b/.test(line))
      .map((line) => line.replace(/^.*?Server /, '')),
  ),
];

interface Roll {
  replica: string;
  exitCode: number | null;
  /** From SIGTERM to the process's exit. */
  exitMs: number;
  /** performance.now() of the new process's spawn, and of its readiness. */
  spawnedAt: number;
  readyAt: number;
}

describe('a rollout while the primary dies: two replicas behind HAProxy (HTTP, no retries) on Patroni', () => {
  let haproxy: string;
  let cluster: HaPostgres | undefined;
  let balancer: Balancer | undefined;
  const replicas: RunningService[] = [];

  beforeAll(async () => {
    haproxy = await ensureHaPostgres();
    cluster = await HaPostgres.start(haproxy);
  }, 360_000);
  afterAll(async () => {
    await balancer?.stop();
    await Promise.all(replicas.map((replica) => replica.process.stop()));
    await cluster?.stop();
  });

  it('answers every request itself (200, or 503 with the Error body), loses nothing, drains each old replica to exit 0, and a replica started with no primary serves its 503s, then creates', async () => {
    const ha = cluster!;
    replicas.push(
      ...(await Promise.all([
        startService(ha.url, REPLICA_SETTINGS),
        startService(ha.url, REPLICA_SETTINGS),
      ])),
    );
    const front = await Balancer.start(
      haproxy,
      [replicas[0].port, replicas[1].port],
      { plain: true },
    );
    balancer = front;
    const started = performance.now();
    const ledger = new Ledger('rollout while the primary dies (HAProxy)');
    // The creates sent straight to the replica started during the outage.
    const direct = new Ledger('rollout: straight to the replica started first');
    const perfTime = (book: Ledger) => performance.now() - book.now();
    const [ledgerStart, directStart] = [perfTime(ledger), perfTime(direct)];
    const sentAt = (start: number, { at }: Attempt) => start + at;
    const answeredAt = (start: number, attempt: Attempt) =>
      start + attempt.at + attempt.outcome.ms;

    // A plain client beside the service: one commit through HAProxy on a fresh connection.
    const commits = watch<Commit>(50, () => ha.commit(1_000));
    const routes = watch(250, () => ha.balancer.states().catch(() => ({})));
    const load = startLoad({
      baseUrl: front.url,
      token: TOKEN,
      ledger,
      concurrency: CLIENTS,
      retryPauseMs: RETRY_PAUSE_MS,
    });
    let directLoad: RunningLoad | undefined;
    const rolls: Roll[] = [];
    let killedAt = 0;
    let resumedAt = 0;
    try {
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
      const primary = await ha.untilHealthy();
      // Patroni paused: the killed primary stays dead and nothing is promoted until resumed,
      // so that the first new replica surely starts, and answers, while there is no primary
      // (its start alone takes seconds, longer than a failover on a quiet machine).
      await ha.pause(true);
      for (const [index, old] of replicas.entries()) {
        const name = `replica${index + 1}`;
        const stoppedAt = performance.now();
        old.process.signal('SIGTERM');
        // Its readiness said 503 and HAProxy no longer sends to it: then the primary dies,
        // while this replica still drains (the first time).
        await front.untilServers('DOWN', name);
        if (index === 0) {
          killedAt = performance.now();
          process.kill(await primary.postmasterPid(), 'SIGKILL');
        }
        const exitCode = await old.process.exitCode();
        const exitMs = performance.now() - stoppedAt;
        // No primary: HAProxy in front of the database has no node UP.
        if (index === 0) await ha.balancer.untilServers('DOWN');
        // The same port, as a pod's replacement behind the same Service.
        const fresh = await spawnService(ha.url, REPLICA_SETTINGS, old.port);
        const spawnedAt = performance.now();
        replicas[index] = fresh;
        if (index === 0) {
          directLoad = startLoad({
            baseUrl: fresh.url,
            token: TOKEN,
            ledger: direct,
            concurrency: 1,
            retryPauseMs: RETRY_PAUSE_MS,
          });
          await eventually(
            'the replica started with no primary to answer a create with its 503',
            () =>
              direct.answered().some(({ outcome }) => outcome.status === 503)
                ? true
                : undefined,
            { everyMs: 100, timeoutMs: 120_000 },
          );
          resumedAt = performance.now();
          await ha.pause(false);
        }
        await untilReady(fresh.process, fresh.url, READY_WITHIN_MS);
        const readyAt = performance.now();
        await front.untilServers('UP', name);
        rolls.push({ replica: name, exitCode, exitMs, spawnedAt, readyAt });
      }
      await ha.untilHealthy();
      await ledger.acknowledgedMore(LOAD_UNDER_WAY);
    } catch (error) {
      process.stdout.write(
        `${ha.logs}\n${front.log.slice(-4_000)}\n${replicas
          .map((replica) => replica.process.text.slice(-3_000))
          .join('\n')}\n`,
      );
      throw error;
    } finally {
      await load.stop();
      await directLoad?.stop();
      await Promise.all([commits, routes].map((w) => w.stop()));
    }

    const since = (time: number | undefined) =>
      time === undefined ? undefined : Math.round(time - killedAt);
    // HAProxy (the database's) routing to a node again after Patroni resumed: a primary.
    const routedAt = routes.seen.find(
      ({ value, at }) =>
        at > resumedAt && Object.values(value).some((state) => state === 'UP'),
    )?.at;
    const plainCommits = commits.seen.map(({ value }) => value);
    const commit = backAfter(plainCommits, killedAt);
    const firstCreate = (book: Ledger, start: number, after: number) => {
      const times = book.attempts
        .filter(
          (attempt) =>
            attempt.outcome.kind === 'answered' &&
            attempt.outcome.status === 200 &&
            sentAt(start, attempt) >= after,
        )
        .map((attempt) => answeredAt(start, attempt));
      return times.length === 0 ? undefined : Math.min(...times);
    };
    const createdAt =
      commit && firstCreate(ledger, ledgerStart, commit.failedAt);
    // The replica started first: its first answer of any kind, its 503s, its first create.
    const [firstFresh] = rolls;
    const directAnswers = direct.answered();
    const firstAnswerAt =
      directAnswers.length === 0
        ? undefined
        : answeredAt(directStart, directAnswers[0]);
    const direct503 = directAnswers.filter(
      ({ outcome }) => outcome.status === 503,
    ).length;
    const directCreatedAt =
      commit && firstCreate(direct, directStart, commit.failedAt);
    const createsWithin = (at: number | undefined) =>
      commit && at !== undefined
        ? Math.round(createsAgainWithin(plainCommits, commit.backAt, at))
        : undefined;
    const counts = (book: Ledger) => {
      const result: Record<string, number> = {};
      for (const { outcome } of book.attempts) {
        const key =
          outcome.kind === 'no-answer'
            ? `no answer (${outcome.error})`
            : outcome.status === 503 && typeof outcome.body === 'string'
              ? "503 (HAProxy's own page)"
              : String(outcome.status);
        result[key] = (result[key] ?? 0) + 1;
      }
      return result;
    };
    process.stdout.write(
      `[reliability] rollout while the primary dies: through HAProxy ${JSON.stringify(counts(ledger))}; ` +
        `straight to the first new replica ${JSON.stringify(counts(direct))}; ` +
        `HAProxy routed to a new primary at ${since(routedAt)} ms, a commit of a plain client at ${since(commit?.backAt)} ms, ` +
        `the first create through HAProxy at ${since(createdAt)} ms, the first new replica's first create at ${since(directCreatedAt)} ms ` +
        `(allowed after the commit: ${createsWithin(createdAt)} and ${createsWithin(directCreatedAt)} ms); ` +
        rolls
          .map(
            (roll) =>
              `${roll.replica}: old exited ${roll.exitCode} in ${Math.round(roll.exitMs)} ms, new spawned at ${since(roll.spawnedAt)} ms, ready ${Math.round(roll.readyAt - roll.spawnedAt)} ms later`,
          )
          .join('; ') +
        `; Patroni resumed at ${since(resumedAt)} ms; the first new replica answered first at ${since(firstAnswerAt)} ms, ${direct503} times 503 ` +
        `(scenario ${Math.round((performance.now() - started) / 1000)} s); ` +
        `HAProxy: ${serverChanges(front.log).join('; ')}\n`,
    );

    // Every request through HAProxy answered by the service: 200, or its 503 with the
    // Error body. HAProxy's own page (HTML) would mean no replica was left in rotation.
    expect(
      ledger.attempts.filter(({ outcome }) => outcome.kind === 'no-answer'),
    ).toEqual([]);
    for (const { outcome } of ledger.answered())
      if (outcome.status !== 200)
        expect({ status: outcome.status, body: outcome.body }).toEqual({
          status: 503,
          body: DATABASE_503,
        });

    // Each old replica exited 0 within its drain, the first with no primary to close on.
    expect(rolls.map(({ exitCode }) => exitCode)).toEqual([0, 0]);
    for (const { exitMs } of rolls) expect(exitMs).toBeLessThan(EXIT_WITHIN_MS);

    // The first new replica was started while there was no primary, came up and answered
    // its 503s (the scenario waited for one before resuming Patroni): once it answered,
    // every answer was its own.
    expect(routedAt).toBeDefined();
    expect(firstFresh.spawnedAt).toBeLessThan(resumedAt);
    expect(direct503).toBeGreaterThan(0);
    expect(firstAnswerAt).toBeDefined();
    for (const attempt of direct.attempts) {
      if (sentAt(directStart, attempt) < firstAnswerAt!) continue;
      expect(attempt.outcome.kind).toBe('answered');
      if (attempt.outcome.kind === 'answered' && attempt.outcome.status !== 200)
        expect({
          status: attempt.outcome.status,
          body: attempt.outcome.body,
        }).toEqual({ status: 503, body: DATABASE_503 });
    }

    // Creates again soon after the plain client's first commit (createsAgainWithin): through
    // HAProxy, and by the replica started during the outage, by itself.
    expect(commit).toBeDefined();
    expect(createdAt).toBeDefined();
    expect(createdAt! - commit!.backAt).toBeLessThanOrEqual(
      createsWithin(createdAt)!,
    );
    expect(directCreatedAt).toBeDefined();
    expect(directCreatedAt! - commit!.backAt).toBeLessThanOrEqual(
      createsWithin(directCreatedAt)!,
    );

    // Nothing acknowledged lost, no row never sent, on the primary and on its standby.
    const primary = await ha.untilHealthy();
    const standby = ha.nodes.find((node) => node !== primary)!;
    await untilReplayed(primary, standby);
    for (const node of [primary, standby])
      for (const book of [ledger, direct]) {
        const verified = await book.verify(node.url());
        expect({
          node: node.name,
          scenario: book.scenario,
          lost: verified.lost,
          duplicated: verified.duplicated,
        }).toEqual({
          node: node.name,
          scenario: book.scenario,
          lost: 0,
          duplicated: 0,
        });
      }
  });
});
