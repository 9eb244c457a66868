import { setTimeout as sleep } from 'node:timers/promises';
import { Environment } from '../../src/config/environment.js';
import { samplePeakRss } from '../../test-kit/peak-rss.mjs';
import { percentile } from '../../test-kit/percentile.mjs';
import { type Figures, Ledger } from './support/ledger.js';
import {
  type OpenLoadFigures,
  runOpenLoad,
  startLoad,
} from './support/load.js';
import { TOKEN, useServiceOnTestPostgres } from './support/scenario.js';

const WARM_UP_MS = 6_000;
const OPEN_WARM_UP_MS = 2_000;
const CLOSED_LOOP_MS = 5_000;
const OPEN_LOOP_MS = 10_000;
/**
 * Capacity, then twice it for 10 s, this many times in turn. On a shared 2-core machine one
 * round's ratio of the two ranged from 0.78 to 1.39 (sd 0.15 over 27 rounds): the closed
 * loop's gain from batching and the machine's other work move from second to second. So
 * the creates are compared to the capacity over all rounds, each capacity measured just
 * before its open loop (five rounds bring the spread to about a third), and every other
 * bound holds in every round.
 */
const ROUNDS = 5;
/**
 * Creates the service takes in at once by default, worked on or waiting their turn: closed
 * loops up to it are ordinary.
 */
const defaults = new Environment();
const TAKEN_IN =
  defaults.CREATE_CONCURRENCY_LIMIT + defaults.CREATE_WAITING_LIMIT;
/** The bound: every request is answered within this, or counts as unanswered. */
const ANSWER_WITHIN_MS = 10_000;

type Measured = {
  ledger: Ledger;
  ms: number;
  peakMb: number;
};

/** One round: the 64 clients' closed loop, then the open loop at twice what they got. */
type Round = {
  closed: Measured;
  open: Measured;
  generator: OpenLoadFigures;
};

async function closedLoop(
  url: string,
  pid: number,
  scenario: string,
  concurrency: number,
  forMs = CLOSED_LOOP_MS,
): Promise<Measured> {
  const ledger = new Ledger(scenario);
  const memory = samplePeakRss(pid);
  const load = startLoad({
    baseUrl: url,
    token: TOKEN,
    ledger,
    concurrency,
    timeoutMs: ANSWER_WITHIN_MS,
  });
  const started = performance.now();
  await sleep(forMs);
  await load.stop();
  const ms = performance.now() - started;
  return { ledger, ms, peakMb: Math.round(memory.stop()) };
}

async function openLoop(
  url: string,
  pid: number,
  scenario: string,
  rate: number,
  forMs = OPEN_LOOP_MS,
): Promise<{ open: Measured; generator: OpenLoadFigures }> {
  const open: Measured = {
    ledger: new Ledger(scenario),
    ms: forMs,
    peakMb: 0,
  };
  const memory = samplePeakRss(pid);
  const generator = await runOpenLoad({
    baseUrl: url,
    token: TOKEN,
    ledger: open.ledger,
    rate,
    durationMs: forMs,
    timeoutMs: ANSWER_WITHIN_MS,
  });
  open.peakMb = Math.round(memory.stop());
  return { open, generator };
}

const createdPerSecond = ({ ledger, ms }: Measured): number =>
  ledger.answered().filter(({ outcome }) => outcome.status === 200).length /
  (ms / 1000);

const latencies = ({ ledger }: Measured): number[] =>
  ledger.attempts.map(({ outcome }) => outcome.ms);

// Not Math.max(...values): a hundred thousand arguments may not fit on the stack.
const largest = (values: number[]): number =>
  values.reduce((most, value) => Math.max(most, value), 0);

function report(measured: Measured, figures: Figures): void {
  const all = latencies(measured);
  process.stdout.write(
    `[reliability] ${figures.scenario}: ${Math.round(createdPerSecond(measured))} creates/s, ` +
      `p50 ${Math.round(percentile(all, 0.5))} ms, p99 ${Math.round(percentile(all, 0.99))} ms, ` +
      `max ${Math.round(largest(all))} ms, peak RSS ${measured.peakMb} MB\n`,
  );
}

const OVERLOADED = {
  status: 503,
  body: { error: 503, message: 'The service is overloaded; retry later.' },
};

const sum = (values: number[]): number =>
  values.reduce((total, value) => total + value, 0);

describe('overload: an open loop at twice the measured capacity', () => {
  // The defaults: what is checked is what a deployment gets without tuning.
  const own = useServiceOnTestPostgres('reliability-overload');

  it(`answers ordinary closed loops (64 clients, and as many as CREATE_CONCURRENCY_LIMIT + CREATE_WAITING_LIMIT) without a single 503, and sheds the excess of twice what 64 clients get, ${ROUNDS} times: every answer within 10 s, p99 <= 1 s, >= 0.8x the creates, bounded memory`, async () => {
    const { postgres, service } = own;
    const pid = service.process.pid;
    if (pid === undefined) throw new Error('The service has no process id.');
    // The first requests compile and fill caches: not part of any figure. Production's
    // flags leave out V8's mid-tier compiler, so code takes seconds to reach TurboFan; the
    // refusal path and the open loop's connections only start in an open loop, so a short
    // one belongs to the warm-up too (without it the first round came out lowest every time).
    const warmUp = await closedLoop(
      service.url,
      pid,
      'overload: warm-up',
      64,
      WARM_UP_MS,
    );
    await openLoop(
      service.url,
      pid,
      'overload: warm-up, open loop',
      Math.round(2 * createdPerSecond(warmUp)),
      OPEN_WARM_UP_MS,
    );

    // A loop of as many clients as the service takes creates at once is ordinary load too
    // (no 503), and shows how far past its best the open loops go: the service batches
    // more inserts per statement the more creates run at once.
    const closedAtLimit = await closedLoop(
      service.url,
      pid,
      `overload: closed loop, ${TAKEN_IN} clients`,
      TAKEN_IN,
    );
    const best = createdPerSecond(closedAtLimit);

    // Capacity as the issue measures it, in this run on this machine: what 64 closed-loop
    // clients get; then twice that, offered for 10 s.
    const rounds: Round[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const closed = await closedLoop(
        service.url,
        pid,
        `overload, round ${round}: closed loop, 64 clients`,
        64,
      );
      const capacity = createdPerSecond(closed);
      const rate = Math.round(2 * capacity);
      const { open, generator } = await openLoop(
        service.url,
        pid,
        `overload, round ${round}: open loop at ${rate}/s (2x capacity)`,
        rate,
      );
      rounds.push({ closed, open, generator });
    }

    const closedLoops = [closedAtLimit, ...rounds.map(({ closed }) => closed)];
    const figures: Figures[] = [];
    for (const measured of [
      closedAtLimit,
      ...rounds.flatMap(({ closed, open }) => [closed, open]),
    ]) {
      const ledgerFigures = await measured.ledger.verify(postgres.url);
      report(measured, ledgerFigures);
      figures.push(ledgerFigures);
    }
    const capacity =
      sum(rounds.map(({ closed }) => createdPerSecond(closed))) / ROUNDS;
    const created =
      sum(rounds.map(({ open }) => createdPerSecond(open))) / ROUNDS;
    for (const [index, { closed, open, generator }] of rounds.entries()) {
      const capacityInRound = createdPerSecond(closed);
      const createdInRound = createdPerSecond(open);
      process.stdout.write(
        `[reliability] overload, round ${index + 1}: capacity ${Math.round(capacityInRound)} creates/s ` +
          `(64 clients; ${Math.round(best)} at best, the open loop offers ${((2 * capacityInRound) / best).toFixed(2)}x that); ` +
          `at 2x: ${Math.round(createdInRound)} creates/s (${(createdInRound / capacityInRound).toFixed(2)}x); ` +
          `the generator opened ${generator.connections} connections, lagged at most ${Math.round(generator.maxLagMs)} ms\n`,
      );
    }
    process.stdout.write(
      `[reliability] overload, ${ROUNDS} rounds: capacity ${Math.round(capacity)} creates/s on average, ` +
        `at 2x: ${Math.round(created)} creates/s (${(created / capacity).toFixed(2)}x)\n`,
    );

    // Nothing acknowledged is lost or written twice, in any of the runs.
    for (const { lost, duplicated } of figures)
      expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    // Ordinary closed loops: every create succeeds.
    for (const measured of closedLoops)
      expect(
        measured.ledger.attempts.filter(
          ({ outcome }) =>
            outcome.kind !== 'answered' || outcome.status !== 200,
        ),
      ).toEqual([]);
    for (const { open, generator } of rounds) {
      // The load was offered as planned: the generator kept to its schedule.
      expect(open.ledger.attempts).toHaveLength(generator.planned);
      expect(generator.maxLagMs).toBeLessThan(1_000);
      // At twice the capacity: everything answered in time, 200 or the overload 503.
      expect(
        open.ledger.attempts.filter(
          ({ outcome }) => outcome.kind !== 'answered',
        ),
      ).toEqual([]);
      for (const { outcome } of open.ledger
        .answered()
        .filter(({ outcome }) => outcome.status !== 200))
        expect(outcome).toMatchObject(OVERLOADED);
      expect(largest(latencies(open))).toBeLessThan(ANSWER_WITHIN_MS);
      expect(percentile(latencies(open), 0.99)).toBeLessThanOrEqual(1_000);
      // Bounded memory: shedding keeps the footprint near the closed loops'.
      expect(open.peakMb).toBeLessThan(
        largest(closedLoops.map(({ peakMb }) => peakMb)) * 1.5,
      );
    }
    expect(created).toBeGreaterThanOrEqual(0.8 * capacity);
    expect(service.process.isRunning).toBe(true);
  });
});
