import { type RunningApp, startApp } from './support/app.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('security headers', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp();
  });
  afterAll(() => service.close());

  it('sends the helmet security headers', async () => {
    const answer = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(answer.headers.get('content-security-policy')).toContain(
      "default-src 'self'",
    );
  });
});
