import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import { eventually } from '../../../test/support/poll.js';
import { MetricsService } from '../../lib/index.js';
import { RequestTiming } from './request-timing.js';

describe('RequestTiming: every answered request in the histogram, by method, route template and status', () => {
  let server: Server;
  let url: string;
  const metrics = new MetricsService({ driver: {} } as DataSource);
  const timing = new RequestTiming(metrics);

  beforeAll(async () => {
    server = createServer((request, response) => {
      timing.follow(request, response);
      if (request.url === '/plants')
        Object.assign(request, { route: { path: '/plants' } });
      if (request.url === '/gone') return; // never answered
      response.statusCode = request.url === '/plants' ? 201 : 404;
      response.end();
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** The histogram's sample counts by their labels. */
  const counts = async () =>
    Object.fromEntries(
      (await metrics.httpRequestDuration.get()).values
        .filter(({ metricName }) => metricName?.endsWith('_count'))
        .map(({ labels, value }) => [
          `${labels.method} ${labels.route} ${labels.status}`,
          value,
        ]),
    );

  it('observes each answer once, in seconds, labelled by the route template, never the raw path', async () => {
    const started = performance.now();
    await fetch(`${url}/plants`, { method: 'POST' });
    await fetch(`${url}/plants`, { method: 'POST' });
    const elapsedSeconds = (performance.now() - started) / 1000;
    await fetch(`${url}/some/path?x=1`);
    const aborted = new AbortController();
    const gone = fetch(`${url}/gone`, { signal: aborted.signal }).catch(
      () => undefined,
    );
    await eventually('the two kinds answered', async () =>
      Object.keys(await counts()).length === 2 ? true : undefined,
    );
    aborted.abort();
    await gone;
    expect(await counts()).toEqual({
      'POST /plants 201': 2,
      'GET unmatched 404': 1,
    });
    const [sum] = (await metrics.httpRequestDuration.get()).values.filter(
      ({ metricName, labels }) =>
        metricName?.endsWith('_sum') && labels.route === '/plants',
    );
    // Seconds, not milliseconds nor nanoseconds: within the time the two requests took here.
    expect(sum.value).toBeGreaterThan(0);
    expect(sum.value).toBeLessThanOrEqual(elapsedSeconds);
  });
});
