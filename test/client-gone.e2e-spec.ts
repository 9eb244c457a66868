import { request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { eventually } from './support/poll.js';
import { countPlants } from './support/stored-plants.js';
import { useServiceOnOwnPostgres } from './support/own-postgres.js';
import { TOKEN } from './support/tokens.js';

// PlantInsertBatcher's MAX_BATCHES_IN_FLIGHT: past it, rows wait in the queue.
const STATEMENT_SLOTS = 4;

async function gauge(baseUrl: string, name: string): Promise<number> {
  const { text } = await send(`${baseUrl}/metrics`);
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((error, count) =>
      error ? reject(error) : resolve(count),
    ),
  );
}

// A database of its own, since this test hangs it.
describe('a create whose client has gone', () => {
  const own = useServiceOnOwnPostgres('client-gone', {
    // Long enough that only the client's leaving can drop the queued row.
    DATABASE_REQUEST_TIMEOUT_MS: '60000',
    INSERT_QUEUE_WAIT_MS: '60000',
  });

  it('is never written when its client left while it waited for a statement', async () => {
    const { postgres, service } = own;
    const { url } = service;
    expect(
      (await postPlant(url, newPlantJson(uniqueId(), 'Warm'))).status,
    ).toBe(200);
    await postgres.pause();
    const heldIds: bigint[] = [];
    const held: Promise<{ status: number }>[] = [];
    const goneId = uniqueId();
    try {
      // One create per statement slot, each sent once the previous one holds its slot.
      for (let slot = 1; slot <= STATEMENT_SLOTS; slot += 1) {
        const id = uniqueId();
        heldIds.push(id);
        held.push(postPlant(url, newPlantJson(id, 'Held')));
        await eventually(`statement ${slot} in flight`, async () =>
          (await gauge(url, 'plant_insert_statements_in_flight')) === slot
            ? true
            : undefined,
        );
      }
      const server = service.app.getHttpServer() as Server;
      const body = newPlantJson(goneId, 'Gone');
      const gone = httpRequest(`${url}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      });
      gone.on('error', () => {});
      gone.end(body);
      await eventually('the row queued behind the slots', async () =>
        (await gauge(url, 'plant_insert_rows_waiting')) === 1
          ? true
          : undefined,
      );
      const before = await connectionsOf(server);
      gone.destroy();
      await eventually('the service to see the client leave', async () =>
        (await connectionsOf(server)) < before ? true : undefined,
      );
    } finally {
      await postgres.resume();
    }

    const answers = await Promise.all(held);
    expect(answers.map(({ status }) => status)).toEqual(heldIds.map(() => 200));
    await eventually('the queue to empty', async () =>
      (await gauge(url, 'plant_insert_rows_waiting')) === 0 &&
      (await gauge(url, 'plant_insert_statements_in_flight')) === 0
        ? true
        : undefined,
    );
    for (const id of heldIds)
      expect(await countPlants(service.dataSource, id)).toBe(1);
    expect(await countPlants(service.dataSource, goneId)).toBe(0);
  });
});
