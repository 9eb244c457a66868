import { type RunningApp, startApp } from './app.js';
import { startTestPostgres, type TestPostgres } from './test-postgres.js';

export interface ServiceOnOwnPostgres {
  readonly postgres: TestPostgres;
  readonly service: RunningApp;
}

/**
 * The service on a PostgreSQL of its own, for a describe block whose tests pause or stop
 * their database: started before its tests, and after them resumed (should a test have
 * left it paused), closed and removed. Read the properties inside tests, not before.
 */
export function useServiceOnOwnPostgres(
  name: string,
  settings: Record<string, string> = {},
  app: Parameters<typeof startApp>[1] = {},
): ServiceOnOwnPostgres {
  let postgres: TestPostgres | undefined;
  let service: RunningApp | undefined;
  beforeAll(async () => {
    postgres = await startTestPostgres(name);
    service = await startApp({ DATABASE_URL: postgres.url, ...settings }, app);
  });
  afterAll(async () => {
    await postgres?.resume();
    await service?.close();
    await postgres?.stop();
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
      return started(service, 'The service');
    },
  };
}
