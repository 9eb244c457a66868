import { startApp } from './support/app.js';
import { freePort } from '../test-kit/free-port.mjs';
import { expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('metrics', () => {
  it('publishes request durations by route and status, plant outcomes, pool use and process defaults', async () => {
    const service = await startApp();
    try {
      const id = uniqueId();
      await postPlant(service.url, newPlantJson(id, 'Fern'));
      await postPlant(service.url, newPlantJson(id, 'Fern'));
      await postPlant(service.url, newPlantJson(id, 'Other'));
      await send(`${service.url}/nowhere`);

      const answer = await send(`${service.url}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = answer.text;
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="POST",route="\/plants",status="200"\} 2$/m,
      );
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="POST",route="\/plants",status="409"\} 1$/m,
      );
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1$/m,
      );
      expect(text).toMatch(/^plants_created_total 1$/m);
      expect(text).toMatch(/^plants_replayed_total 1$/m);
      expect(text).toMatch(/^plants_conflicts_total 1$/m);
      expect(text).toMatch(/^db_pool_connections \d+$/m);
      expect(text).toMatch(/^process_cpu_seconds_total /m);
    } finally {
      await service.close();
    }
  });

  it('can be turned off', async () => {
    const service = await startApp({ METRICS_ENABLED: 'false' });
    try {
      const answer = await send(`${service.url}/metrics`);
      expectErrorAnswer(answer, 404);
    } finally {
      await service.close();
    }
  });

  it('can move to a port of its own', async () => {
    const port = await freePort();
    const service = await startApp({
      METRICS_PORT: String(port),
      HOST: '127.0.0.1',
    });
    try {
      expect((await send(`${service.url}/metrics`)).status).toBe(404);
      const own = await send(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(own.text).toMatch(/^process_cpu_seconds_total /m);
      const other = await send(`http://127.0.0.1:${port}/other`);
      expectErrorAnswer(other, 404);
    } finally {
      await service.close();
    }
  });
});
