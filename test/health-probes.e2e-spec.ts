import { ShutdownState } from '../src/lifecycle/shutdown-state.js';
import { type RunningApp, startApp } from './support/app.js';
import { errorBody, send } from './support/http.js';

describe('health probes', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp();
  });
  afterAll(() => service.close());

  it.each(['/health/live', '/health/ready', '/health'])(
    'answers %s without a token',
    async (path) => {
      const answer = await send(`${service.url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok' });
    },
  );

  it('turns readiness to 503 as soon as shutdown begins, while liveness stays 200', async () => {
    service.app.get(ShutdownState).begin();

    for (const path of ['/health/ready', '/health']) {
      const answer = await send(`${service.url}${path}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(answer.body).toEqual(
        errorBody(503, 'The service is not ready: it is shutting down.'),
      );
    }
    expect((await send(`${service.url}/health/live`)).status).toBe(200);
  });
});
