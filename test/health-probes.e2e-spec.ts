import { ShutdownState } from '../src/service/lifecycle/shutdown-state.js';
import { startApp, useApp } from './support/app.js';
import { errorBody, send } from './support/http.js';

const PROBES = ['/health/live', '/health/ready', '/health'];

describe('health probes', () => {
  const service = useApp({ INSTANCE_ID: 'probe-instance-1' });

  it.each(PROBES)(
    'answers %s without a token, naming the instance',
    async (path) => {
      const answer = await send(`${service().url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        status: 'ok',
        instance: 'probe-instance-1',
      });
    },
  );

  it('names a random instance of its own when INSTANCE_ID is unset, the same on every probe', async () => {
    const other = await startApp();
    try {
      const answers = await Promise.all(
        PROBES.map(async (path) => (await send(`${other.url}${path}`)).body),
      );
      const [{ instance }] = answers as [{ instance: string }];
      expect(instance).toMatch(/^[0-9a-f-]{36}$/);
      expect(answers).toEqual(PROBES.map(() => ({ status: 'ok', instance })));
    } finally {
      await other.close();
    }
  });

  it('turns readiness (and /health) to 503 as soon as shutdown begins, while liveness stays 200', async () => {
    service().app.get(ShutdownState).begin();

    for (const path of ['/health/ready', '/health']) {
      const answer = await send(`${service().url}${path}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(answer.body).toEqual(
        errorBody(503, 'The service is not ready: it is shutting down.'),
      );
    }
    expect((await send(`${service().url}/health/live`)).status).toBe(200);
  });
});
