import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export type Outcome =
  | { kind: 'answered'; status: number; body: unknown; ms: number }
  | { kind: 'no-answer'; error: string; ms: number };

export interface Attempt {
  id: bigint;
  name: string;
  tag?: string;
  outcome: Outcome;
  /** When it was sent, relative to the ledger's start (ms). */
  at: number;
}

export interface Figures {
  scenario: string;
  sent: number;
  acknowledged: number;
  checked: number;
  lost: number;
  duplicated: number;
  indeterminate: number;
  /** Ids with a row although every request for them was refused (`verify`'s `refused`). */
  refusedButWritten?: number;
  statuses: Record<string, number>;
}

interface Row {
  id: string;
  name: string;
  tag: string | null;
}

/** Acknowledged creates that show a scenario's load is flowing: a few rounds of its clients. */
export const LOAD_UNDER_WAY = 50;

/**
 * Every request a scenario sent and what came back, checked against the database:
 * 1. every 200 has its row with exactly the name and tag sent (else: lost);
 * 2. no row differs from the request that got 200 for its id (else: duplicated);
 * 3. a request without an answer may or may not have its row: indeterminate, never lost;
 * 4. given what counts as a refusal (an answer that promises nothing was written), no id
 *    every request of which was refused has a row (else: refused but written).
 */
export class Ledger {
  readonly attempts: Attempt[] = [];
  private readonly started = Date.now();
  private acknowledged = 0;

  constructor(readonly scenario: string) {}

  record(attempt: Omit<Attempt, 'at'> & { at?: number }): void {
    this.attempts.push({
      ...attempt,
      at: attempt.at ?? Date.now() - this.started,
    });
    if (attempt.outcome.kind === 'answered' && attempt.outcome.status === 200)
      this.acknowledged += 1;
  }

  /**
   * Resolves once `count` more creates have been acknowledged (200) than when called: the
   * load has reached the service and is being answered. A scenario waits on this, not on
   * a fixed sleep, before a fault and after a recovery.
   */
  async acknowledgedMore(count: number, timeoutMs = 60_000): Promise<void> {
    const target = this.acknowledged + count;
    const deadline = Date.now() + timeoutMs;
    const from = this.attempts.length;
    while (this.acknowledged < target) {
      if (Date.now() > deadline)
        throw new Error(
          `${this.scenario}: not ${count} more creates acknowledged within ${timeoutMs} ms; ` +
            `what came back meanwhile: ${JSON.stringify(outcomeCounts(this.attempts.slice(from)))}`,
        );
      await sleep(20);
    }
  }

  now(): number {
    return Date.now() - this.started;
  }

  answered(): (Attempt & {
    outcome: Extract<Outcome, { kind: 'answered' }>;
  })[] {
    return this.attempts.filter(
      (
        attempt,
      ): attempt is Attempt & {
        outcome: Extract<Outcome, { kind: 'answered' }>;
      } => attempt.outcome.kind === 'answered',
    );
  }

  async verify(
    databaseUrl: string,
    { refused }: { refused?: (status: number) => boolean } = {},
  ): Promise<Figures> {
    const acknowledged = this.answered().filter(
      (attempt) => attempt.outcome.status === 200,
    );
    const ids = [
      ...new Set(this.attempts.map((attempt) => attempt.id.toString())),
    ];
    const rows = await readRows(databaseUrl, ids);

    let lost = 0;
    let duplicated = 0;
    const winners = new Map<string, Attempt>();
    for (const attempt of acknowledged) {
      const key = attempt.id.toString();
      const row = rows.get(key);
      if (
        row === undefined ||
        row.name !== attempt.name ||
        row.tag !== (attempt.tag ?? null)
      )
        lost += 1;
      const earlier = winners.get(key);
      // Two 200s for one id are fine only as a replay of the very same plant.
      if (
        earlier !== undefined &&
        (earlier.name !== attempt.name || earlier.tag !== attempt.tag)
      )
        duplicated += 1;
      winners.set(key, attempt);
    }
    // By id: a scenario at twice a service's capacity sends a hundred thousand requests.
    const sentById = new Map<string, Attempt[]>();
    for (const attempt of this.attempts) {
      const key = attempt.id.toString();
      const sent = sentById.get(key);
      if (sent === undefined) sentById.set(key, [attempt]);
      else sent.push(attempt);
    }
    let refusedButWritten = 0;
    for (const [key, row] of rows) {
      const sent = sentById.get(key) ?? [];
      if (
        refused !== undefined &&
        sent.length > 0 &&
        sent.every(
          ({ outcome }) =>
            outcome.kind === 'answered' && refused(outcome.status),
        )
      )
        refusedButWritten += 1;
      const winner = winners.get(key);
      const sentExactly = sent.some(
        (attempt) =>
          attempt.name === row.name && (attempt.tag ?? null) === row.tag,
      );
      // A row nobody sent, or one that differs from the acknowledged request, is a fault.
      if (
        !sentExactly ||
        (winner !== undefined &&
          (winner.name !== row.name || (winner.tag ?? null) !== row.tag))
      ) {
        duplicated += 1;
      }
    }
    const statuses: Record<string, number> = {};
    for (const attempt of this.attempts) {
      const key =
        attempt.outcome.kind === 'answered'
          ? String(attempt.outcome.status)
          : 'no answer';
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    const figures: Figures = {
      scenario: this.scenario,
      sent: this.attempts.length,
      acknowledged: acknowledged.length,
      // Every id sent was looked up in the database.
      checked: ids.length,
      lost,
      duplicated,
      indeterminate: this.attempts.length - this.answered().length,
      refusedButWritten,
      statuses,
    };
    printFigures(figures);
    return figures;
  }
}

export function printFigures(figures: Figures): void {
  process.stdout.write(
    `[reliability] ${figures.scenario}: sent=${figures.sent} acknowledged=${figures.acknowledged} ` +
      `checked=${figures.checked} lost=${figures.lost} duplicated=${figures.duplicated} ` +
      `indeterminate=${figures.indeterminate} ` +
      ((figures.refusedButWritten ?? 0) > 0
        ? `refusedButWritten=${figures.refusedButWritten} `
        : '') +
      `statuses=${JSON.stringify(figures.statuses)}\n`,
  );
}

async function readRows(
  databaseUrl: string,
  ids: string[],
): Promise<Map<string, Row>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query<Row>(
      'SELECT id::text AS id, name, tag FROM plants WHERE id = ANY($1::bigint[])',
      [ids],
    );
    return new Map(result.rows.map((row) => [row.id, row]));
  } finally {
    await client.end();
  }
}

/**
 * How many attempts got each kind of outcome ("200", "503 The database is unavailable; ...",
 * "no answer: ECONNREFUSED"): what a scenario that waited in vain prints, so that a failure
 * in CI says why without its full log.
 */
function outcomeCounts(attempts: Attempt[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { outcome } of attempts) {
    const message = (outcome.kind === 'answered' &&
      (outcome.body as { message?: unknown } | null)?.message) as unknown;
    const kind =
      outcome.kind === 'no-answer'
        ? `no answer: ${outcome.error}`
        : typeof message === 'string'
          ? `${outcome.status} ${message}`
          : String(outcome.status);
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}
