import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import { DatabasePing } from './database-ping.js';

/** A DataSource whose pool answers each ping with `answer()`, counting the pings. */
function databaseAnswering(answer: () => Promise<unknown>) {
  let pings = 0;
  const client = Object.assign(new EventEmitter(), {
    query: () => {
      pings += 1;
      return answer();
    },
    release: () => {},
  });
  const pool = { connect: () => Promise.resolve(client) };
  const dataSource = { driver: { master: pool } } as unknown as DataSource;
  return { ping: new DatabasePing(dataSource), pings: () => pings };
}

describe('DatabasePing', () => {
  afterEach(() => vi.useRealTimers());

  it('shares one ping among concurrent checks', async () => {
    const { ping, pings } = databaseAnswering(async () => ({ rows: [] }));
    await Promise.all(Array.from({ length: 20 }, () => ping.check()));
    expect(pings()).toBe(1);
  });

  it('reuses a very recent result, then pings again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { ping, pings } = databaseAnswering(async () => ({ rows: [] }));
    await ping.check();
    await ping.check();
    expect(pings()).toBe(1);

    vi.setSystemTime(Date.now() + 1_001);
    await ping.check();
    expect(pings()).toBe(2);
  });

  it('gives every waiting check the database error, and reuses the failure too', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const down = Object.assign(new Error('down'), { code: 'ECONNREFUSED' });
    const { ping, pings } = databaseAnswering(() => Promise.reject(down));
    const checks = await Promise.allSettled([ping.check(), ping.check()]);
    expect(checks).toEqual([
      { status: 'rejected', reason: down },
      { status: 'rejected', reason: down },
    ]);
    await expect(ping.check()).rejects.toBe(down);
    expect(pings()).toBe(1);
  });
});
