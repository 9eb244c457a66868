import { type RunningApp, startApp } from './app.js';
import { RawConnections } from './raw-http.js';

export interface RawService {
  readonly app: RunningApp;
  readonly connections: RawConnections;
}

/**
 * For a describe block: the service started before its tests and closed after them, and
 * raw connections to it that each test opens and that are ended after each test.
 */
export function serveForRawConnections(): RawService {
  let app: RunningApp | undefined;
  let port = 0;
  const connections = new RawConnections(() => port);
  beforeAll(async () => {
    app = await startApp();
    port = Number(new URL(app.url).port);
  });
  afterEach(() => connections.closeAll());
  afterAll(() => app?.close());
  return {
    get app(): RunningApp {
      if (app === undefined) throw new Error('The service is not started yet.');
      return app;
    },
    connections,
  };
}
