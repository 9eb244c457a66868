import { processTree, signalEach } from './process-tree.js';
import { postmasterPid } from './store-folder.js';

export interface DatabaseOutage {
  /** Resolves once the database answers again (`ms` after it stopped, or after end()). */
  readonly over: Promise<void>;
  /** Continues the database now. */
  end(): Promise<void>;
}

export interface StoreFaults {
  /** Stops the store's PostgreSQL from answering for `ms`, connections left open, as a hung database. */
  databaseDown(ms: number): Promise<DatabaseOutage>;
}

/** A database that can be held still and let go: processes, or a container. */
export interface PausableDatabase {
  pause(): Promise<void>;
  resume(): Promise<void>;
}

/** An embedded PostgreSQL: SIGSTOP to its postmaster and every backend, SIGCONT after. */
export function embeddedDatabase(dataDir: string): PausableDatabase {
  let stopped: number[] = [];
  return {
    async pause() {
      const postmaster = await postmasterPid(dataDir);
      if (postmaster === undefined)
        throw new Error('The store has no PostgreSQL running.');
      // The postmaster first, so that it forks no new backend behind our back.
      signalEach([postmaster], 'SIGSTOP');
      stopped = processTree(postmaster);
      signalEach(stopped, 'SIGSTOP');
    },
    resume() {
      signalEach(stopped, 'SIGCONT');
      stopped = [];
      return Promise.resolve();
    },
  };
}

/** Faults on the store's own database; nothing in the service is told. */
export class DatabaseFaults implements StoreFaults {
  private outage?: DatabaseOutage;

  constructor(private readonly database: PausableDatabase) {}

  async databaseDown(ms: number): Promise<DatabaseOutage> {
    if (this.outage !== undefined)
      throw new Error(
        'The database is down already: await outage.end() first.',
      );
    await this.database.pause();
    let resolveOver!: () => void;
    const over = new Promise<void>((resolve) => (resolveOver = resolve));
    let ending: Promise<void> | undefined;
    const end = (): Promise<void> => {
      clearTimeout(timer);
      ending ??= this.database.resume().then(() => {
        this.outage = undefined;
        resolveOver();
      });
      return ending;
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
