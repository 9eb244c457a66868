import { setTimeout as sleep } from 'node:timers/promises';
import { Environment } from '../../src/config/environment.js';
import { samplePeakRss } from '../support/peak-rss.mjs';
import {
  startTestPostgres,
  type TestPostgres,
} from '../support/test-postgres.js';
import { type Figures, Ledger } from './support/ledger.js';
import { runOpenLoad, startLoad } from './support/load.js';
import { percentile } from './support/percentile.js';
import {
  type RunningService,
  startService,
  TOKEN,
} from './support/scenario.js';

const WARM_UP_MS = 2_000;
const CLOSED_LOOP_MS = 5_000;
const OPEN_LOOP_MS = 10_000;
/** Creates the service takes in at once by default: closed loops up to it are ordinary. */
const { CREATE_CONCURRENCY_LIMIT } = new Environment();
/** The bound: every request is answered within this, or counts as unanswered. */
const ANSWER_WITHIN_MS = 10_000;

type Measured = {
  ledger: Ledger;
  ms: number;
  peakMb: number;
};

async function closedLoop(
  url: string,
  pid: number,
  scenario: string,
  concurrency: number,
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
  await sleep(CLOSED_LOOP_MS);
  await load.stop();
  const ms = performance.now() - started;
  return { ledger, ms, peakMb: Math.round(memory.stop()) };
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

describe('overload: an open loop at twice the measured capacity', () => {
  let postgres: TestPostgres;
  let service: RunningService;

  beforeAll(async () => {
    postgres = await startTestPostgres('reliability-overload');
    // The defaults: what is checked is what a deployment gets without tuning.
    service = await startService(postgres.url);
  });
  afterAll(async () => {
    await service?.process.stop();
    await postgres?.stop();
  });

  it('answers ordinary closed loops (64 clients, and as many as CREATE_CONCURRENCY_LIMIT) without a single 503, and sheds the excess of twice what 64 clients get: every answer within 10 s, p99 <= 1 s, >= 0.8x the creates, bounded memory', async () => {
    const pid = service.process.pid;
    if (pid === undefined) throw new Error('The service has no process id.');
    // The first requests compile and fill caches: not part of the capacity.
    const warmUp = startLoad({
      baseUrl: service.url,
      token: TOKEN,
      ledger: new Ledger('overload: warm-up'),
      concurrency: 64,
    });
    await sleep(WARM_UP_MS);
    await warmUp.stop();

    // Capacity as the issue measures it, in this run on this machine: what 64 closed-loop
    // clients get. A loop of as many clients as the service takes creates at once is
    // ordinary load too (no 503), and shows how far past its best the open loop goes: the
    // service batches more inserts per statement the more creates run at once.
    const closed64 = await closedLoop(
      service.url,
      pid,
      'overload: closed loop, 64 clients',
      64,
    );
    const closedAtLimit = await closedLoop(
      service.url,
      pid,
      `overload: closed loop, ${CREATE_CONCURRENCY_LIMIT} clients`,
      CREATE_CONCURRENCY_LIMIT,
    );
    const capacity = createdPerSecond(closed64);
    const best = Math.max(capacity, createdPerSecond(closedAtLimit));
    const rate = Math.round(2 * capacity);

    const open: Measured = {
      ledger: new Ledger(`overload: open loop at ${rate}/s (2x capacity)`),
      ms: OPEN_LOOP_MS,
      peakMb: 0,
    };
    const memory = samplePeakRss(pid);
    const generator = await runOpenLoad({
      baseUrl: service.url,
      token: TOKEN,
      ledger: open.ledger,
      rate,
      durationMs: OPEN_LOOP_MS,
      timeoutMs: ANSWER_WITHIN_MS,
    });
    open.peakMb = Math.round(memory.stop());

    const runs = [closed64, closedAtLimit, open];
    const figures: Figures[] = [];
    for (const measured of runs) {
      const ledgerFigures = await measured.ledger.verify(postgres.url);
      report(measured, ledgerFigures);
      figures.push(ledgerFigures);
    }
    const created = createdPerSecond(open);
    process.stdout.write(
      `[reliability] overload: capacity ${Math.round(capacity)} creates/s (64 clients; ` +
        `${Math.round(best)} at best, the open loop offers ${(rate / best).toFixed(2)}x that); at 2x: ` +
        `${Math.round(created)} creates/s (${(created / capacity).toFixed(2)}x); the generator opened ` +
        `${generator.connections} connections, lagged at most ${Math.round(generator.maxLagMs)} ms\n`,
    );
    // The load was offered as planned: the generator kept to its schedule.
    expect(open.ledger.attempts).toHaveLength(generator.planned);
    expect(generator.maxLagMs).toBeLessThan(1_000);

    // Nothing acknowledged is lost or written twice, in any of the runs.
    for (const { lost, duplicated } of figures)
      expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    // Ordinary closed loops: every create succeeds.
    for (const measured of [closed64, closedAtLimit])
      expect(
        measured.ledger.attempts.filter(
          ({ outcome }) =>
            outcome.kind !== 'answered' || outcome.status !== 200,
        ),
      ).toEqual([]);
    // At twice the capacity: everything answered in time, 200 or the overload 503.
    expect(
      open.ledger.attempts.filter(({ outcome }) => outcome.kind !== 'answered'),
    ).toEqual([]);
    for (const { outcome } of open.ledger
      .answered()
      .filter(({ outcome }) => outcome.status !== 200))
      expect(outcome).toMatchObject(OVERLOADED);
    expect(largest(latencies(open))).toBeLessThan(ANSWER_WITHIN_MS);
    expect(percentile(latencies(open), 0.99)).toBeLessThanOrEqual(1_000);
    expect(created).toBeGreaterThanOrEqual(0.8 * capacity);
    // Bounded memory: shedding keeps the footprint near the closed loops'.
    expect(open.peakMb).toBeLessThan(
      Math.max(closed64.peakMb, closedAtLimit.peakMb) * 1.5,
    );
    expect(service.process.isRunning).toBe(true);
  });
});
