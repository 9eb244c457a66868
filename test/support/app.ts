import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.setup.js';

export interface RunningApp {
  app: NestExpressApplication;
  url: string;
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * The real service, as main.ts builds it, listening on a free loopback port. `settings`
 * are environment variables for this instance only: the app reads them while it boots.
 */
export async function startApp(
  settings: Record<string, string> = {},
): Promise<RunningApp> {
  const saved = Object.fromEntries(
    Object.keys(settings).map((key) => [key, process.env[key]]),
  );
  Object.assign(process.env, settings);
  let app: NestExpressApplication;
  try {
    app = await createApp();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
  await app.listen(0, '127.0.0.1');
  return {
    app,
    url: await app.getUrl(),
    dataSource: app.get(DataSource),
    close: () => app.close(),
  };
}
