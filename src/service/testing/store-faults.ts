import { processTree, signalEach } from './process-tree.js';
import { postmasterPid } from './store-folder.js';

export interface DatabaseOutage {
  /** Resolves once the database answers again (`ms` after it stopped, or after end()). */
  readonly over: Promise<void>;
  /** Continues the database now. */
  end(): Promise<void>;
}

export interface StoreFaults {
  /**
   * Stops the store's PostgreSQL from answering for `ms`: resolved once it is stopped.
   * Connections stay open and nothing answers them, as with a hung database or a network
   * partition; the service finds out through its own timeouts.
   */
  databaseDown(ms: number): Promise<DatabaseOutage>;
}

/**
 * Faults of a store with its own embedded PostgreSQL: SIGSTOP to its postmaster and
 * every backend, SIGCONT after. Nothing in the service is told.
 */
export class EmbeddedFaults implements StoreFaults {
  private outage?: DatabaseOutage;

  constructor(private readonly dataDir: string) {}

  async databaseDown(ms: number): Promise<DatabaseOutage> {
    if (this.outage !== undefined)
      throw new Error(
        'The database is down already: await outage.end() first.',
      );
    const postmaster = await postmasterPid(this.dataDir);
    if (postmaster === undefined)
      throw new Error('The store has no PostgreSQL running.');
    // The postmaster first, so that it forks no new backend behind our back.
    signalEach([postmaster], 'SIGSTOP');
    const stopped = processTree(postmaster);
    signalEach(stopped, 'SIGSTOP');
    let resolveOver!: () => void;
    const over = new Promise<void>((resolve) => (resolveOver = resolve));
    const end = (): Promise<void> => {
      clearTimeout(timer);
      if (this.outage === outage) {
        signalEach(stopped, 'SIGCONT');
        this.outage = undefined;
        resolveOver();
      }
      return over;
    };
    const timer = setTimeout(() => void end(), ms);
    const outage: DatabaseOutage = { over, end };
    this.outage = outage;
    return outage;
  }

  /** Continues a database still stopped: stop() needs it to answer. */
  async end(): Promise<void> {
    await this.outage?.end();
  }
}

/** A store on a database it does not own (`databaseUrl`): nothing to stop. */
export class NoFaults implements StoreFaults {
  databaseDown(): Promise<DatabaseOutage> {
    return Promise.reject(
      new Error(
        'databaseDown() stops the embedded PostgreSQL of a store: start the store without databaseUrl.',
      ),
    );
  }
}
