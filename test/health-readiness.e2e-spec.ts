import type { Pool } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { poolOf } from '../src/lib/database/bounded-query.js';
import { WRITE_CIRCUIT_DEFAULTS } from '../src/lib/database/write-circuit.js';
import { type RunningApp, startApp } from './support/app.js';
import { send } from './support/http.js';

// The probes are public: a flood of them must not become a flood of database work.
describe('the probes and the database', () => {
  let service: RunningApp;
  let pool: Pool;

  beforeAll(async () => {
    service = await startApp();
    pool = poolOf(service.dataSource);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await service?.close();
  });

  it('GET /health shares one commit probe among concurrent calls and reuses a very recent result', async () => {
    // The start's own probe (DatabaseStartup) is reused for WRITE_CIRCUIT_DEFAULTS.reuseForMs:
    // past it, whatever the machine's speed, the burst below needs a probe of its own.
    await sleep(WRITE_CIRCUIT_DEFAULTS.reuseForMs + 50);
    const connect = vi.spyOn(pool, 'connect');
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send(`${service.url}/health`)),
    );

    expect(answers.map(({ status }) => status)).toEqual(
      Array.from({ length: 50 }, () => 200),
    );
    // One probe, or two if the burst straddled the end of a reused result.
    expect(connect.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(connect.mock.calls.length).toBeLessThanOrEqual(2);
    connect.mockRestore();
  });

  it('GET /health/ready asks nothing of the database (issue 42)', async () => {
    const connect = vi.spyOn(pool, 'connect');
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send(`${service.url}/health/ready`)),
    );

    expect(answers.map(({ status }) => status)).toEqual(
      Array.from({ length: 50 }, () => 200),
    );
    expect(connect.mock.calls.length).toBe(0);
    connect.mockRestore();
  });
});
