import pg from 'pg';
import {
  newDatabase,
  usePlainPostgres,
} from '../../../test/support/plain-postgres.js';
import { StoreConnection } from './store-reset.js';

/** The sockets keeping this process alive: a runner cannot exit while one is held. */
const heldSockets = (): number =>
  process.getActiveResourcesInfo().filter((type) => type === 'TCPSocketWrap')
    .length;

describe("reset()'s connection (StoreConnection)", () => {
  const postgres = usePlainPostgres();

  it('empties the plants, its idle connection holding no runner open', async () => {
    const url = await newDatabase(postgres(), 'store_reset_spec');
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query('CREATE TABLE plants (id int)');
    await setup.query('INSERT INTO plants VALUES (1), (2)');

    const before = heldSockets();
    const connection = new StoreConnection(url);
    try {
      await connection.reset();
      // Its pooled connection, idle now, is there but does not hold the process.
      expect(heldSockets()).toBeLessThanOrEqual(before);
      const { rows } = await setup.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM plants',
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await connection.close();
      await setup.end();
    }
  });
});
