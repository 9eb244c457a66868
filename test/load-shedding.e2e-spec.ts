import {
  errorBody,
  newPlantJson,
  postPlant,
  send,
  uniqueId,
} from './support/http.js';
import { useServiceOnOwnPostgres } from './support/own-postgres.js';

const OVERLOADED = 'The service is overloaded; retry later.';

// A database of its own, since this test hangs it.
describe('load shedding: creates past CREATE_CONCURRENCY_LIMIT and CREATE_WAITING_LIMIT', () => {
  const own = useServiceOnOwnPostgres('shedding', {
    CREATE_CONCURRENCY_LIMIT: '1',
    CREATE_WAITING_LIMIT: '0',
  });

  it('answers a create past the limit at once with 503 and Retry-After, before any other work', async () => {
    const { postgres, service } = own;
    await postgres.pause();
    let answers;
    try {
      // One create holds the only place (its database hangs); the other is refused.
      answers = await Promise.all([
        postPlant(service.url, newPlantJson(uniqueId(), 'Fern')),
        postPlant(service.url, newPlantJson(uniqueId(), 'Fern')),
        // Other routes are never refused.
        send(`${service.url}/health/live`),
      ]);
    } finally {
      await postgres.resume();
    }
    const [first, second, live] = answers;
    const refused = [first, second].filter(
      (answer) =>
        (answer.body as { message?: string } | undefined)?.message ===
        OVERLOADED,
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]?.status).toBe(503);
    expect(refused[0]?.headers.get('retry-after')).toBe('2');
    expect(refused[0]?.headers.get('content-type')).toMatch(
      /^application\/json/,
    );
    expect(refused[0]?.body).toEqual(errorBody(503, OVERLOADED));
    expect(live.status).toBe(200);
    // Counted, though it never reached Express and its request metrics.
    const metrics = await send(`${service.url}/metrics`);
    expect(metrics.text).toMatch(
      /^plants_shed_total\{reason="concurrency"\} 1$/m,
    );

    // The place is given back when its create is answered: creates work again.
    const deadline = Date.now() + 10_000;
    let again = await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'));
    while (again.status !== 200 && Date.now() < deadline)
      again = await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'));
    expect(again.status).toBe(200);
  });
});
