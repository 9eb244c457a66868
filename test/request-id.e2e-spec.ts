import { useApp } from './support/app.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('request id', () => {
  const service = useApp();

  it('echoes a sane X-Request-Id, and makes one up otherwise', async () => {
    const kept = await postPlant(
      service().url,
      newPlantJson(uniqueId(), 'Fern'),
      { headers: { 'X-Request-Id': 'abc-123' } },
    );
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await postPlant(
      service().url,
      newPlantJson(uniqueId(), 'Fern'),
      {
        headers: { 'X-Request-Id': 'x'.repeat(500) },
      },
    );
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
