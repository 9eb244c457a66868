import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { Pool } from 'pg';
import { eventually } from '../../../test/support/poll.js';
import { DatabaseDeadlineError, DatabaseDownError } from './database-errors.js';
import { WriteCircuit, type WriteCircuitOptions } from './write-circuit.js';

const unavailable = () =>
  Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
const lost = () => new Error('Connection terminated unexpectedly');

/**
 * A stand-in pool whose every statement is answered by `answer` (the current one, so a
 * test can change what the database does), counting the statements.
 */
function database(
  timings: WriteCircuitOptions = {
    probeTimeoutMs: 60_000,
    readinessTimeoutMs: 60_000,
    retryEveryMs: 1,
    reuseForMs: 60_000,
  },
) {
  let answer: () => Promise<unknown> = async () => ({ rows: [] });
  const statements: string[] = [];
  const pool = {
    connect: async () =>
      Object.assign(new EventEmitter(), {
        query: (sql: string, parameters: unknown[] = []) => {
          statements.push(sql);
          // As PostgreSQL: as many parameters as the statement's $n, no more.
          const wanted = new Set(sql.match(/\$\d+/g)).size;
          if (parameters.length !== wanted)
            return Promise.reject(
              Object.assign(
                new Error(
                  `bind message supplies ${parameters.length} parameters, but prepared statement "" requires ${wanted}`,
                ),
                { code: '08P01' },
              ),
            );
          return answer();
        },
        release: () => {},
      }),
  } as unknown as Pool;
  const health = new WriteCircuit(() => pool, timings);
  return {
    health,
    pool,
    statements,
    answers: (next: () => Promise<unknown>) => (answer = next),
  };
}

/**
 * On a faked clock set at 1,000,000: a circuit whose probes, while down, start 100 ms apart
 * (its other timings a minute), and when each probe statement was sent (`probes`, in ms from
 * then); `answers` sets how the database answers it.
 */
function probingEvery100Ms() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(1_000_000);
  const { health, answers } = database({
    probeTimeoutMs: 60_000,
    readinessTimeoutMs: 60_000,
    retryEveryMs: 100,
    reuseForMs: 60_000,
  });
  const probes: number[] = [];
  return {
    health,
    probes,
    answers: (next: () => Promise<unknown>) =>
      answers(() => {
        probes.push(Date.now() - 1_000_000);
        return next();
      }),
  };
}

/** Resolves once `health` lets writes through again. */
async function untilUp(health: WriteCircuit): Promise<void> {
  while (!health.canCommit)
    await new Promise((resolve) => setImmediate(resolve));
}

describe('WriteCircuit', () => {
  it('lets writes through and keeps them while the database answers', async () => {
    const { health } = database();
    await expect(health.write(async () => 'written')).resolves.toBe('written');
    expect(health.canCommit).toBe(true);
  });

  it('once a write finds the database gone: refuses the next at once, releases those waiting, and lets writes through once a probe commits', async () => {
    const { health, statements, answers } = database();
    answers(() => Promise.reject(unavailable()));
    let released: unknown;
    const waiting = health.write(
      (signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            released = signal.reason;
            reject(signal.reason as Error);
          }),
        ),
    );

    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(waiting).rejects.toBeInstanceOf(DatabaseDownError);
    expect(released).toBeInstanceOf(DatabaseDownError);
    expect(health.canCommit).toBe(false);
    let ran = false;
    await expect(
      health.write(async () => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(DatabaseDownError);
    expect(ran).toBe(false);

    // The database commits again: the probe, running all along, sees it.
    const probesWhileDown = statements.length;
    answers(async () => ({ rows: [] }));
    await untilUp(health);
    expect(probesWhileDown).toBeGreaterThan(0);
    expect(statements.every((sql) => sql.includes('commit_probe'))).toBe(true);
    await expect(health.write(async () => 'written')).resolves.toBe('written');
  });

  it("probes in no request's trace context, though a request's write found the database down", async () => {
    context.setGlobalContextManager(
      new AsyncLocalStorageContextManager().enable(),
    );
    try {
      const { health, answers } = database();
      // The span each probe found active: pg's instrumentation would make the probe its child.
      const activeAtProbe: (string | undefined)[] = [];
      answers(() => {
        activeAtProbe.push(trace.getActiveSpan()?.spanContext().spanId);
        return Promise.reject(unavailable());
      });
      const request = trace.wrapSpanContext({
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: 1,
      });
      await context.with(trace.setSpan(ROOT_CONTEXT, request), async () => {
        expect(trace.getActiveSpan()).toBe(request);
        await expect(
          health.write(() => Promise.reject(unavailable())),
        ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      });
      await eventually('two probes', () =>
        activeAtProbe.length >= 2 ? true : undefined,
      );
      expect(activeAtProbe.slice(0, 2)).toEqual([undefined, undefined]);
      answers(async () => ({ rows: [] }));
      await untilUp(health);
    } finally {
      context.disable();
    }
  });

  it('a lost connection alone is not the database down: a probe that commits keeps writes going', async () => {
    const { health, statements } = database();
    await expect(health.write(() => Promise.reject(lost()))).rejects.toThrow(
      'Connection terminated unexpectedly',
    );
    // The probe it started commits: still up.
    await new Promise((resolve) => setImmediate(resolve));
    await health.check();
    expect(statements).toHaveLength(1);
    expect(health.canCommit).toBe(true);
  });

  it('a probe that meets connections the server ended tries fresh ones before it calls the database down', async () => {
    const { health, statements, answers } = database();
    let ended = 2;
    answers(() =>
      ended-- > 0 ? Promise.reject(lost()) : Promise.resolve({ rows: [] }),
    );
    await expect(health.check()).resolves.toBeUndefined();
    expect(statements).toHaveLength(3);
    expect(health.canCommit).toBe(true);
  });

  it('a lost connection and a probe that cannot connect: down', async () => {
    const { health, answers } = database();
    answers(() => Promise.reject(unavailable()));
    await expect(health.write(() => Promise.reject(lost()))).rejects.toThrow();
    await expect(health.check()).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    expect(health.canCommit).toBe(false);
  });

  it('a failure that is not the database (a bad row) leaves writes going, and starts no probe', async () => {
    const { health, statements } = database();
    const badRow = Object.assign(new Error('value too long'), {
      code: '22001',
    });
    await expect(health.write(() => Promise.reject(badRow))).rejects.toBe(
      badRow,
    );
    expect(health.canCommit).toBe(true);
    expect(statements).toEqual([]);
  });

  it('refresh: a circuit called down by writes that met the pool not yet open lets writes through once it opens and refresh resolves, not at its next probe', async () => {
    const { pool, statements } = database();
    let open = false;
    const health = new WriteCircuit(
      () => {
        if (!open) throw new DatabaseDownError();
        return pool;
      },
      {
        probeTimeoutMs: 60_000,
        readinessTimeoutMs: 60_000,
        // No second probe within the test: only refresh can bring the circuit up.
        retryEveryMs: 600_000,
        reuseForMs: 60_000,
      },
    );
    await expect(
      health.write(() => Promise.reject(new DatabaseDownError())),
    ).rejects.toBeInstanceOf(DatabaseDownError);
    await eventually('the first probe, which meets the pool closed', () =>
      health.check().then(
        () => undefined,
        (error: unknown) =>
          error instanceof DatabaseDownError ? true : undefined,
      ),
    );
    expect(health.canCommit).toBe(false);
    expect(statements).toEqual([]);

    open = true;
    await health.refresh();
    expect(health.canCommit).toBe(true);
    expect(statements).toHaveLength(1);
    health.beforeApplicationShutdown();
  });

  it('refresh resolves when the database cannot commit too, with the circuit down', async () => {
    const { health, answers } = database();
    answers(() => Promise.reject(unavailable()));
    await expect(health.refresh()).resolves.toBeUndefined();
    expect(health.canCommit).toBe(false);
    health.beforeApplicationShutdown();
  });

  it('readiness gives up on a slow probe without declaring the database down; the probe, once it commits, counts', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'Date'] });
    try {
      const { health, answers } = database({
        probeTimeoutMs: 2_000,
        readinessTimeoutMs: 800,
        retryEveryMs: 100,
        reuseForMs: 1_000,
      });
      let commit: (value: unknown) => void = () => {};
      answers(() => new Promise((resolve) => (commit = resolve)));
      const ready = health.check();
      const outcome = expect(ready).rejects.toBeInstanceOf(
        DatabaseDeadlineError,
      );
      await vi.advanceTimersByTimeAsync(800);
      await outcome;
      expect(health.canCommit).toBe(true);

      commit({ rows: [] });
      await vi.advanceTimersByTimeAsync(0);
      await expect(health.check()).resolves.toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('readiness: concurrent checks share one commit, a recent result is reused, a failure is answered while down without waiting', async () => {
    const { health, statements } = database();
    await Promise.all(Array.from({ length: 20 }, () => health.check()));
    await health.check();
    expect(statements).toHaveLength(1);

    const down = new WriteCircuit(
      () =>
        ({
          connect: () => Promise.reject(unavailable()),
        }) as unknown as Pool,
      {
        probeTimeoutMs: 60_000,
        readinessTimeoutMs: 60_000,
        retryEveryMs: 60_000,
        reuseForMs: 0,
      },
    );
    await expect(down.check()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(down.canCommit).toBe(false);
    await expect(down.check()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    down.beforeApplicationShutdown();
  });
});

describe('WriteCircuit, what starts a probe and what it decides', () => {
  /** The failures of a write that start a probe rather than call the database down. */
  const PROBING_FAILURES: [string, () => Error][] = [
    ['a lost connection', lost],
    ['a write past its deadline', () => new DatabaseDeadlineError()],
  ];

  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it.each(PROBING_FAILURES)(
    '%s starts a probe by itself, which calls the database down when it cannot connect',
    async (_case, failure) => {
      const { health, statements, answers } = database();
      answers(() => Promise.reject(unavailable()));
      await expect(
        health.write(() => Promise.reject(failure())),
      ).rejects.toThrow();
      await eventually('the probe to find the database down', () =>
        health.canCommit ? undefined : true,
      );
      expect(statements.length).toBeGreaterThan(0);
      health.beforeApplicationShutdown();
    },
  );

  it.each(PROBING_FAILURES)(
    '%s alone does not call the database down: its probe, which commits, decides',
    async (_case, failure) => {
      const warned = vi
        .spyOn(Logger.prototype, 'warn')
        .mockImplementation(() => undefined);
      const { health } = database();
      await expect(
        health.write(() => Promise.reject(failure())),
      ).rejects.toThrow();
      expect(health.canCommit).toBe(true);
      await expect(health.check()).resolves.toBeUndefined();
      expect(health.canCommit).toBe(true);
      expect(warned).not.toHaveBeenCalled();
    },
  );

  it('a probe that keeps meeting ended connections gives up after 3 attempts', async () => {
    const { health, statements, answers } = database({
      probeTimeoutMs: 60_000,
      readinessTimeoutMs: 60_000,
      retryEveryMs: 60_000,
      reuseForMs: 60_000,
    });
    answers(() => Promise.reject(lost()));
    await expect(health.check()).rejects.toThrow(
      'Connection terminated unexpectedly',
    );
    expect(statements).toHaveLength(3);
    health.beforeApplicationShutdown();
  });

  it('readiness reuses a result for reuseForMs, not a millisecond longer', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const { health, statements } = database({
      probeTimeoutMs: 60_000,
      readinessTimeoutMs: 60_000,
      retryEveryMs: 100,
      reuseForMs: 1_000,
    });
    await health.check();
    vi.setSystemTime(1_000_999);
    await health.check();
    expect(statements).toHaveLength(1);
    vi.setSystemTime(1_001_000);
    await health.check();
    expect(statements).toHaveLength(2);
  });

  it('readiness while down answers at once with the last failure, without waiting on the probe that runs', async () => {
    const { health, answers } = database({
      probeTimeoutMs: 60_000,
      readinessTimeoutMs: 60_000,
      retryEveryMs: 60_000,
      reuseForMs: 0,
    });
    answers(() => Promise.reject(unavailable()));
    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toThrow();
    expect(health.canCommit).toBe(false);
    // The database now keeps every statement waiting.
    answers(() => new Promise(() => {}));
    let answer: unknown;
    health.check().catch((error: unknown) => (answer = error));
    for (let turn = 0; turn < 5; turn += 1)
      await new Promise((resolve) => setImmediate(resolve));
    expect(answer).toMatchObject({ code: 'ECONNREFUSED' });
    health.beforeApplicationShutdown();
  });

  it.each([
    ['answered in 30 ms', 30, [0, 100, 200, 300, 400]],
    ['answered in 100 ms', 100, [0, 100, 200, 300, 400]],
    ['answered in 150 ms', 150, [0, 150, 300, 450]],
  ])(
    'while down, probes start retryEveryMs apart, or at once after a probe slower than that (%s)',
    async (_case, answerMs, startedAt) => {
      const { health, probes, answers } = probingEvery100Ms();
      answers(
        () =>
          new Promise((_, reject) =>
            setTimeout(() => reject(unavailable()), answerMs),
          ),
      );
      await expect(
        health.write(() => Promise.reject(unavailable())),
      ).rejects.toThrow();
      await vi.advanceTimersByTimeAsync(450);
      expect(probes).toEqual(startedAt);
      health.beforeApplicationShutdown();
      await vi.advanceTimersByTimeAsync(1_000);
    },
  );

  it('probes at one pace when the database is found down again just after it came back', async () => {
    const { health, probes, answers } = probingEvery100Ms();
    let commits = false;
    answers(() => {
      const outcome = commits;
      return new Promise((resolve, reject) =>
        setTimeout(
          () => (outcome ? resolve({ rows: [] }) : reject(unavailable())),
          30,
        ),
      );
    });
    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toThrow();
    commits = true;
    // The probe sent at 100 ms commits at 130 ms.
    await vi.advanceTimersByTimeAsync(130);
    expect(health.canCommit).toBe(true);
    commits = false;
    await vi.advanceTimersByTimeAsync(20);
    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(400);
    expect(probes).toEqual([0, 100, 150, 250, 350, 450, 550]);
    health.beforeApplicationShutdown();
    await vi.advanceTimersByTimeAsync(1_000);
  });

  it('a probe that fails for another reason (a missing table) does not call the database down', async () => {
    const { health, answers } = database();
    const missing = Object.assign(new Error('relation does not exist'), {
      code: '42P01',
    });
    answers(() => Promise.reject(missing));
    await expect(health.check()).rejects.toBe(missing);
    expect(health.canCommit).toBe(true);
  });

  it('once the application shuts down, a failure no longer calls the database down', async () => {
    const { health, statements } = database();
    health.beforeApplicationShutdown();
    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toThrow();
    expect(health.canCommit).toBe(true);
    expect(statements).toEqual([]);
  });

  it('logs when the database is found down and how long until it commits again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const warned = vi
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation(() => undefined);
    const logged = vi
      .spyOn(Logger.prototype, 'log')
      .mockImplementation(() => undefined);
    const { health, answers } = database();
    answers(() => Promise.reject(unavailable()));
    await expect(
      health.write(() => Promise.reject(unavailable())),
    ).rejects.toThrow();
    expect(warned).toHaveBeenCalledWith(
      'The database cannot commit now: creates are refused at once until a commit succeeds.',
    );
    expect((warned.mock.contexts[0] as { context?: string }).context).toBe(
      'WriteCircuit',
    );
    vi.setSystemTime(1_000_250);
    answers(async () => ({ rows: [] }));
    await eventually('the database up again', () =>
      health.canCommit ? true : undefined,
    );
    expect(logged).toHaveBeenCalledWith(
      'The database commits again, 250 ms after it was found down.',
    );
  });
});
