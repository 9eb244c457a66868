import pg from 'pg';

/** The test's own connection for reset(), opened at first use, not holding the runner open. */
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

  /** Empties the plants: TRUNCATE waits for creates in flight and leaves none of their rows. */
  async reset(): Promise<void> {
    await this.pool.query('TRUNCATE plants');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
