import { type RunningApp, startApp } from './app.js';
import { startTestPostgres, type TestPostgres } from './test-postgres.js';

/** A service a describe block runs on its own PostgreSQL: how it starts, how it stops. */
export interface ServiceOn<S> {
  start(databaseUrl: string): Promise<S>;
  stop(service: S): Promise<unknown>;
}

export interface OwnPostgres<S> {
  readonly postgres: TestPostgres;
  readonly service: S;
}

/**
 * For a describe block whose tests pause, stop or crash their database: a PostgreSQL of its
 * own, with `service` on it if given, started before its tests (before each test, with
 * `each`), and after them resumed (should a test have left it paused: a hung database holds
 * a service's drain), the service stopped, the database stopped and removed. Read the
 * properties inside tests and hooks, not before.
 */
export function useOwnPostgres<S>(
  name: string,
  service?: ServiceOn<S>,
  { each = false }: { each?: boolean } = {},
): OwnPostgres<S> {
  let postgres: TestPostgres | undefined;
  let running: S | undefined;
  (each ? beforeEach : beforeAll)(async () => {
    postgres = await startTestPostgres(name);
    running = await service?.start(postgres.url);
  });
  (each ? afterEach : afterAll)(async () => {
    await postgres?.resume();
    if (running !== undefined) await service?.stop(running);
    await postgres?.stop();
    postgres = undefined;
    running = undefined;
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started yet`);
    return value;
  };
  return {
    get postgres() {
      return started(postgres, 'The test PostgreSQL');
    },
    get service() {
      return started(running, 'The service');
    },
  };
}

/** The service, in this process as the e2e tests run it, on a PostgreSQL of its own. */
export function useServiceOnOwnPostgres(
  name: string,
  settings: Record<string, string> = {},
  app: Parameters<typeof startApp>[1] = {},
): OwnPostgres<RunningApp> {
  return useOwnPostgres(name, {
    start: (url) => startApp({ DATABASE_URL: url, ...settings }, app),
    stop: (service) => service.close(),
  });
}
