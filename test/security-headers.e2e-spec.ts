import { useApp } from './support/app.js';
import { headersHelmetSets } from './support/helmet-headers.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('security headers', () => {
  const service = useApp();

  const expectHelmetHeaders = (headers: Headers) => {
    const expected = headersHelmetSets();
    expect(Object.keys(expected).length).toBeGreaterThan(10);
    for (const [name, value] of Object.entries(expected))
      expect([name, headers.get(name)]).toEqual([name, value]);
    expect(headers.get('x-powered-by')).toBeNull();
  };

  it('sends every header helmet sets, with its value, on a create', async () => {
    const answer = await postPlant(
      service().url,
      newPlantJson(uniqueId(), 'Fern'),
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(answer.headers.get('content-security-policy')).toContain(
      "default-src 'self'",
    );
    expectHelmetHeaders(answer.headers);
  });

  it('sends them on a refusal and on the OpenAPI document too', async () => {
    const refused = await fetch(`${service().url}/plants`, { method: 'POST' });
    expect(refused.status).toBe(401);
    expectHelmetHeaders(refused.headers);
    const document = await fetch(`${service().url}/openapi.json`);
    expect(document.status).toBe(200);
    expectHelmetHeaders(document.headers);
  });
});
