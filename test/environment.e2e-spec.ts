import { startApp } from './support/app.js';
import { expectErrorAnswer } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';

describe('the environment, validated once and handed to the application', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env))
      if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  });

  it('boots on the settings it is given, without reading process.env again', async () => {
    // Values the schema refuses: reading process.env again would stop the boot.
    Object.assign(process.env, { PORT: 'eighty', BODY_LIMIT: 'huge' });
    const service = await startApp({ BODY_LIMIT: '1kb' });
    try {
      const over = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'x'.repeat(2_000)),
      );
      expectErrorAnswer(
        over,
        413,
        'The request body is larger than the limit of 1kb.',
      );
      const under = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Small'),
      );
      expect(under.status).toBe(200);
    } finally {
      await service.close();
    }
  });
});
