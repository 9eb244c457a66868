import type { Pool } from 'pg';
import { poolOf } from '../src/lib/database/bounded-query.js';
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
