import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { RawConnection } from '../support/raw-http.js';
import { percentile } from '../../test-kit/percentile.mjs';
import { Ledger } from '../support/reliability/ledger.js';
import { nextId, sendPlant } from '../support/reliability/load.js';
import {
  TOKEN,
  useServiceOnTestPostgres,
} from '../support/reliability/scenario.js';

const round = (ms: number): number => Math.round(ms * 10) / 10;

/** Sequential valid creates while `during` runs; their latencies. */
async function validClientLatencies(
  url: string,
  ledger: Ledger,
  count: number,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index += 1) {
    await sendPlant({
      baseUrl: url,
      token: TOKEN,
      ledger,
      id: nextId(),
      name: `Valid ${index}`,
    });
    const outcome = ledger.attempts.at(-1)?.outcome;
    latencies.push(outcome?.ms ?? Number.NaN);
  }
  return latencies;
}

describe('slow, idle and hostile clients', () => {
  const own = useServiceOnTestPostgres('reliability-clients', {
    HTTP_HEADERS_TIMEOUT_MS: '2000',
  });

  it('cuts off clients trickling their headers, and keeps serving others meanwhile', async () => {
    const { postgres, service } = own;
    const tricklers = await Promise.all(
      Array.from({ length: 20 }, () => RawConnection.open(service.port)),
    );
    const started = Date.now();
    for (const trickler of tricklers)
      trickler.write('POST /plants HTTP/1.1\r\nHost: x\r\n');
    const ledger = new Ledger('header tricklers');
    let open = tricklers.length;
    for (const trickler of tricklers)
      void trickler.closed.then(() => (open -= 1));
    // One header line per 250 ms each, never the end of the headers; bounded at 40 rounds.
    for (let line = 0; line < 40 && open > 0; line += 1) {
      for (const trickler of tricklers) trickler.write(`X-Slow-${line}: x\r\n`);
      await sendPlant({
        baseUrl: service.url,
        token: TOKEN,
        ledger,
        id: nextId(),
        name: 'Meanwhile',
      });
      await sleep(250);
    }
    process.stdout.write(
      `[reliability] header tricklers: ${tricklers.length} cut off after ${Date.now() - started} ms ` +
        `(HTTP_HEADERS_TIMEOUT_MS=2000); ${ledger.attempts.length} other requests served meanwhile\n`,
    );
    expect(open).toBe(0);
    for (const trickler of tricklers)
      expect(trickler.text).toMatch(/^HTTP\/1.1 408 /);
    const figures = await ledger.verify(postgres.url);
    expect(figures.acknowledged).toBe(ledger.attempts.length);
    expect(figures.lost).toBe(0);
  });

  it('keeps serving while hundreds of idle keep-alive connections stay open', async () => {
    const { postgres, service } = own;
    const agent = new Agent({ keepAlive: true, maxSockets: 400 });
    const idle: Socket[] = [];
    // 300 connections that made one request and now sit idle, and 100 that never spoke.
    await Promise.all(
      Array.from(
        { length: 300 },
        () =>
          new Promise<void>((resolve, reject) => {
            request(`${service.url}/health/live`, { agent }, (response) => {
              response.resume();
              response.on('end', resolve);
            })
              .on('error', reject)
              .end();
          }),
      ),
    );
    for (let index = 0; index < 100; index += 1) {
      const socket = connect(service.port, '127.0.0.1');
      socket.on('error', () => undefined);
      idle.push(socket);
    }
    try {
      const ledger = new Ledger('hundreds of idle connections');
      const latencies = await validClientLatencies(service.url, ledger, 100);
      process.stdout.write(
        `[reliability] 400 idle connections open: valid client p50 ${round(percentile(latencies, 0.5))} ms, ` +
          `p99 ${round(percentile(latencies, 0.99))} ms over ${latencies.length} requests\n`,
      );
      const figures = await ledger.verify(postgres.url);
      expect(figures.acknowledged).toBe(100);
      expect(figures.lost).toBe(0);
    } finally {
      agent.destroy();
      for (const socket of idle) socket.destroy();
    }
  });

  it('meets a brute force of wrong tokens with 429, and valid clients still get through', async () => {
    const { postgres, service } = own;
    const before = await validClientLatencies(
      service.url,
      new Ledger('valid, before the burst'),
      50,
    );
    const ledger = new Ledger('valid, during a token brute force');
    const statuses: Record<number, number> = {};
    let guessing = true;
    const guesser = async (): Promise<void> => {
      for (let guess = 0; guessing && guess < 200; guess += 1) {
        const response = await fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: {
            authorization: `Bearer pst_guess-${guess}-${Math.random()}`,
            'content-type': 'application/json',
          },
          body: '{}',
        });
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    };
    const guessers = Array.from({ length: 10 }, () => guesser());
    const during = await validClientLatencies(service.url, ledger, 100);
    guessing = false;
    await Promise.all(guessers);

    process.stdout.write(
      `[reliability] token brute force: guesses answered ${JSON.stringify(statuses)}; valid client p50 ` +
        `${round(percentile(before, 0.5))} ms before, ${round(percentile(during, 0.5))} ms during; ` +
        `p99 ${round(percentile(before, 0.99))} ms before, ${round(percentile(during, 0.99))} ms during\n`,
    );
    expect(statuses[401]).toBe(30);
    expect(statuses[429]).toBeGreaterThan(0);
    expect(Object.keys(statuses).sort()).toEqual(['401', '429']);
    const figures = await ledger.verify(postgres.url);
    expect(figures.acknowledged).toBe(100);
    expect(figures.lost).toBe(0);
  });
});
