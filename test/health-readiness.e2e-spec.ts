import type { Pool } from 'pg';
import { poolOf } from '../src/lib/database/bounded-query.js';
import { type RunningApp, startApp } from './support/app.js';
import { send } from './support/http.js';

// GET /health/ready is public: a flood of probes must not become a flood of pings.
describe('the readiness probe and the database', () => {
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

  it('shares one database ping among concurrent probes and reuses a very recent result', async () => {
    const connect = vi.spyOn(pool, 'connect');
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        send(`${service.url}/health/${index % 2 === 0 ? 'ready' : ''}`),
      ),
    );

    expect(answers.map(({ status }) => status)).toEqual(
      Array.from({ length: 50 }, () => 200),
    );
    // One ping, or two if the burst straddled the end of a reused result.
    expect(connect.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(connect.mock.calls.length).toBeLessThanOrEqual(2);
    connect.mockRestore();
  });
});
