import { Agent, request } from 'node:http';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { percentile } from '../../test-kit/percentile.mjs';
import { Ledger } from '../support/reliability/ledger.js';
import { startLoad } from '../support/reliability/load.js';
import {
  TOKEN,
  useServiceOnTestPostgres,
} from '../support/reliability/scenario.js';

/** Index and table scans of api_tokens so far (PostgreSQL's statistics, flushed within 1-10 s). */
async function tokenTableScans(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ scans: string }>(
      `SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans
       FROM pg_stat_user_tables WHERE relname = 'api_tokens'`,
    );
    return Number(rows[0]?.scans ?? 0);
  } finally {
    await client.end();
  }
}

const FLOOD_CLIENTS = 48;
const VALID_CLIENTS = 4;
const PHASE_MS = 5_000;
// Under the default AUTH_FAILURE_LIMIT (30): no flood address is ever blocked.
const REQUESTS_PER_ADDRESS = 20;

/** One refused POST through `agent`; resolves to its status (0: no answer). */
function post(url: string, agent: Agent, token: string): Promise<number> {
  return new Promise((resolve) => {
    const outgoing = request(
      `${url}/plants`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
        timeout: 10_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy());
    outgoing.on('error', () => resolve(0));
    outgoing.end('{}');
  });
}

/**
 * 48 closed-loop keep-alive clients, each moving to a fresh loopback address
 * (127.<range>.y.z) every REQUESTS_PER_ADDRESS requests, below the failure limit: no
 * address is ever blocked, so only the look-up bound stands in the flood's way.
 */
function startFlood(
  url: string,
  range: number,
  token: () => string,
): { stop(): Promise<Record<number, number>> } {
  let running = true;
  let addresses = 0;
  const statuses: Record<number, number> = {};
  const client = async (): Promise<void> => {
    while (running) {
      addresses += 1;
      const agent = new Agent({
        keepAlive: true,
        maxSockets: 1,
        localAddress: `127.${range}.${(addresses >> 8) & 255}.${(addresses % 254) + 1}`,
      });
      for (let sent = 0; running && sent < REQUESTS_PER_ADDRESS; sent += 1) {
        const status = await post(url, agent, token());
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      agent.destroy();
    }
  };
  const clients = Array.from({ length: FLOOD_CLIENTS }, () => client());
  return {
    async stop() {
      running = false;
      await Promise.all(clients);
      return statuses;
    },
  };
}

interface PhaseFigures {
  creates: number;
  latencies: number[];
  flood: Record<number, number>;
}

interface FloodSummary {
  creates: number;
  latencies: number[];
  /** Flood requests answered 401 or 429. */
  refused: number;
  /** Flood requests answered anything else. */
  other: number;
}

// The bounds (20): a guess costs what a token without the prefix costs.
const CREATES_AT_LEAST = 0.67;
const P99_AT_MOST = 1.5;

function summed(phases: PhaseFigures[]): FloodSummary {
  return {
    creates: phases.reduce((total, one) => total + one.creates, 0),
    latencies: phases.flatMap((one) => one.latencies),
    refused: phases.reduce(
      (total, one) => total + (one.flood[401] ?? 0) + (one.flood[429] ?? 0),
      0,
    ),
    other: phases.reduce(
      (total, one) =>
        total +
        Object.entries(one.flood)
          .filter(([status]) => status !== '401' && status !== '429')
          .reduce((count, [, n]) => count + n, 0),
      0,
    ),
  };
}

/** The control flood `a` against the pst_ flood `b`: the two latency-bound checks. */
function withinBounds(a: FloodSummary, b: FloodSummary): boolean {
  return (
    b.creates >= CREATES_AT_LEAST * a.creates &&
    percentile(b.latencies, 0.99) <= P99_AT_MOST * percentile(a.latencies, 0.99)
  );
}

function described(a: FloodSummary, b: FloodSummary): string {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return (
    `control: ${a.refused} refused, valid creates ${a.creates}, p50 ${round(percentile(a.latencies, 0.5))} ms, ` +
    `p99 ${round(percentile(a.latencies, 0.99))} ms; ` +
    `pst_: ${b.refused} refused, valid creates ${b.creates} (${(b.creates / a.creates).toFixed(2)}x), ` +
    `p50 ${round(percentile(b.latencies, 0.5))} ms, p99 ${round(percentile(b.latencies, 0.99))} ms ` +
    `(${(percentile(b.latencies, 0.99) / percentile(a.latencies, 0.99)).toFixed(2)}x)`
  );
}

describe('a flood of failed authentication', () => {
  const own = useServiceOnTestPostgres('reliability-auth-flood', {
    // No periodic reload of the token store during the scenario: any scan of api_tokens
    // below would be the flood's.
    TOKEN_RELOAD_INTERVAL_MS: '600000',
  });

  async function phase(
    name: string,
    range: number,
    token: () => string,
  ): Promise<PhaseFigures> {
    const { postgres, service } = own;
    const ledger = new Ledger(`valid creates during ${name}`);
    const flood = startFlood(service.url, range, token);
    const valid = startLoad({
      baseUrl: service.url,
      token: TOKEN,
      ledger,
      concurrency: VALID_CLIENTS,
    });
    await new Promise((resolve) => setTimeout(resolve, PHASE_MS));
    await valid.stop();
    const statuses = await flood.stop();
    const figures = await ledger.verify(postgres.url);
    expect(figures.lost).toBe(0);
    expect(figures.duplicated).toBe(0);
    expect(figures.indeterminate).toBe(0);
    return {
      creates: figures.acknowledged,
      latencies: ledger.answered().map((attempt) => attempt.outcome.ms),
      flood: statuses,
    };
  }

  /**
   * Two control floods and two pst_ floods, alternated, summed per kind. Each attempt
   * floods from address ranges of its own (127.<range>.y.z), none already counted by the
   * failure limiter.
   */
  async function alternatedRounds(attempt: number): Promise<{
    a: FloodSummary;
    b: FloodSummary;
  }> {
    // Alternated, so that the machine's own noise falls on both sides alike.
    const control: PhaseFigures[] = [];
    const unknown: PhaseFigures[] = [];
    for (const round of [0, 1]) {
      control.push(
        await phase(
          'a control flood (no pst_ prefix)',
          10 * attempt + round,
          () => `guess-${randomBytes(32).toString('base64url')}`,
        ),
      );
      unknown.push(
        await phase(
          'a flood of random pst_ tokens',
          10 * attempt + 5 + round,
          () => `pst_${randomBytes(32).toString('base64url')}`,
        ),
      );
    }
    return { a: summed(control), b: summed(unknown) };
  }

  it('costs valid clients no more than a flood refused without a look-up', async () => {
    const { postgres } = own;
    const scansBefore = await tokenTableScans(postgres.url);
    // A latency bound judged on a shared machine: a round that another process slowed
    // misses it by chance, a look-up per guess misses it every time. So a miss is measured
    // again, at most twice; the table's scan count below is judged once, on every round.
    let { a, b } = await alternatedRounds(1);
    for (let attempt = 2; attempt <= 3 && !withinBounds(a, b); attempt += 1) {
      process.stdout.write(
        `[reliability] auth flood, attempt ${attempt - 1} missed a bound (${described(a, b)}): measuring again\n`,
      );
      ({ a, b } = await alternatedRounds(attempt));
    }
    const scans = (await tokenTableScans(postgres.url)) - scansBefore;
    process.stdout.write(
      `[reliability] auth flood (${FLOOD_CLIENTS} clients, a fresh 127.x address every ${REQUESTS_PER_ADDRESS} requests, ` +
        `${VALID_CLIENTS} valid clients creating, 2 x ${PHASE_MS} ms each): ${described(a, b)}; ` +
        `api_tokens scanned ${scans} times in all\n`,
    );

    expect(a.other).toBe(0);
    expect(b.other).toBe(0);
    // The bounds (20): a guess costs what a token without the prefix costs.
    expect(b.creates).toBeGreaterThanOrEqual(CREATES_AT_LEAST * a.creates);
    expect(percentile(b.latencies, 0.99)).toBeLessThanOrEqual(
      P99_AT_MOST * percentile(a.latencies, 0.99),
    );
    // Tens of thousands of guesses, and the table is not read for them: what scans there
    // are, are the store's start (statistics reach the view late).
    expect(b.refused).toBeGreaterThan(1_000);
    expect(scans).toBeLessThanOrEqual(3);
  });
});
