import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/service/app.setup.js';
import { testEnvironment } from './test-environment.js';

export interface RunningApp {
  app: INestApplication;
  url: string;
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * The real service, as main.ts builds it, listening on a free loopback port. `settings`
 * are environment variables for this instance only, on top of the test environment.
 * `url` is the server's root, without the global prefix.
 */
export async function startApp(
  settings: Record<string, string> = {},
  { globalPrefix }: { globalPrefix?: string } = {},
): Promise<RunningApp> {
  const app = await createApp(testEnvironment(settings));
  // As a host would mount the service's routes under a path of its own.
  if (globalPrefix !== undefined) app.setGlobalPrefix(globalPrefix);
  await app.listen(0, '127.0.0.1');
  return {
    app,
    url: await app.getUrl(),
    dataSource: app.get(DataSource),
    close: () => app.close(),
  };
}

/**
 * startApp(...) before the enclosing describe's tests, closed after them: the returned
 * function gives the running app inside a test or hook, as the testing kit's
 * usePlantStore does.
 */
export function useApp(
  ...start: Parameters<typeof startApp>
): () => RunningApp {
  let running: RunningApp | undefined;
  beforeAll(async () => {
    running = await startApp(...start);
  });
  afterAll(() => running?.close());
  return () => {
    if (running === undefined)
      throw new Error(
        'useApp: the app starts in beforeAll; use it in a test or hook',
      );
    return running;
  };
}
