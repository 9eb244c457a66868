import { errorBody, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { useServiceOnOwnPostgres } from './support/own-postgres.js';
import { CreateAdmission } from '../src/service/load-shedding/create-admission.js';

const OVERLOADED = 'The service is overloaded; retry later.';

// A database of its own, since this test hangs it. With a global prefix too: load shedding
// follows the route wherever Nest mounts it, and nothing else.
describe.each([
  ['at the root', undefined],
  ["under a global prefix ('api')", 'api'],
])(
  'load shedding %s: creates past CREATE_CONCURRENCY_LIMIT and CREATE_WAITING_LIMIT',
  (_where, globalPrefix) => {
    const own = useServiceOnOwnPostgres(
      'shedding',
      { CREATE_CONCURRENCY_LIMIT: '1', CREATE_WAITING_LIMIT: '0' },
      { globalPrefix },
    );
    const root = (): string =>
      globalPrefix === undefined
        ? own.service.url
        : `${own.service.url}/${globalPrefix}`;

    // The route's hook is on the create's route alone: the 405 answers to other methods at
    // the same path are routes of their own (PlantsMethodsController).
    it('meets each create once on the route', async () => {
      const atRoute = vi.spyOn(CreateAdmission.prototype, 'atRoute');
      try {
        const created = await postPlant(
          root(),
          newPlantJson(uniqueId(), 'Fern'),
        );
        expect(created.status).toBe(200);
        expect(atRoute).toHaveBeenCalledTimes(1);
      } finally {
        atRoute.mockRestore();
      }
      const otherMethod = await send(`${root()}/plants`);
      expect(otherMethod.status).toBe(405);
    });

    it('answers a create past the limit at once with 503 and Retry-After, before any other work', async () => {
      const { postgres } = own;
      const url = root();
      await postgres.pause();
      // The route's hook met the create of the test before, and learned its path: the front
      // door now decides for it, so the refused create never reaches the route.
      const atRoute = vi.spyOn(CreateAdmission.prototype, 'atRoute');
      let answers;
      try {
        // One create holds the only place (its database hangs); the other is refused.
        answers = await Promise.all([
          postPlant(url, newPlantJson(uniqueId(), 'Fern')),
          postPlant(url, newPlantJson(uniqueId(), 'Fern')),
          // Other routes are never refused, nor a path that merely starts like the route.
          send(`${url}/health/live`),
          send(`${url}/plantsx`, { method: 'POST' }),
        ]);
      } finally {
        await postgres.resume();
      }
      const metAtTheRoute = atRoute.mock.calls.length;
      atRoute.mockRestore();
      expect(metAtTheRoute).toBe(1);
      const [first, second, live, lookalike] = answers;
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
      expect(lookalike.status).toBe(404);
      // Counted, though it never reached the request metrics.
      const metrics = await send(`${url}/metrics`);
      expect(metrics.text).toMatch(
        /^plants_shed_total\{reason="concurrency"\} 1$/m,
      );
      // The place is given back when its create is answered: creates work again.
      const deadline = Date.now() + 10_000;
      let again = await postPlant(url, newPlantJson(uniqueId(), 'Fern'));
      while (again.status !== 200 && Date.now() < deadline)
        again = await postPlant(url, newPlantJson(uniqueId(), 'Fern'));
      expect(again.status).toBe(200);
    });
  },
);
