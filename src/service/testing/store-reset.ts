import pg from 'pg';

/**
 * The test's own connection to a store's database, for reset(): one client, opened at the
 * first reset, that lets the runner exit when idle (a suite that forgets stop()).
 */
export class StoreConnection {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 1,
      allowExitOnIdle: true,
      application_name: 'plant-store-testing',
    });
    // A client dropped while idle (the database stopped by a fault): the next query reconnects.
    this.pool.on('error', () => {});
  }

  /**
   * Empties the plants. TRUNCATE, not DELETE: it takes the table's lock, so it waits for
   * creates in flight and leaves no row of theirs behind, and costs the same however many
   * rows there were.
   */
  async reset(): Promise<void> {
    await this.pool.query('TRUNCATE plants');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
