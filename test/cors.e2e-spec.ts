import { startApp } from './support/app.js';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('CORS', () => {
  it('sends no CORS headers unless origins are configured', async () => {
    const service = await startApp();
    try {
      const answer = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Fern'),
        {
          headers: { Origin: 'https://evil.example' },
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await service.close();
    }
  });

  it('answers CORS preflights for configured origins only', async () => {
    const cors = await startApp({ CORS_ORIGINS: 'https://app.example' });
    try {
      const preflight = (origin: string) =>
        send(`${cors.url}/plants`, {
          method: 'OPTIONS',
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization,content-type',
          },
        });
      const allowed = await preflight('https://app.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(
        'https://app.example',
      );
      const other = await preflight('https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await cors.close();
    }
  });
});
