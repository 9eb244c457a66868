import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPostgresServer } from '../../src/database/embedded-postgres.js';
import { freePort } from './free-port.js';

export interface TestPostgres {
  url: string;
  /** Stops the server; with `keepData`, it can be started again on the same port. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  restart(): Promise<void>;
}

/** A throwaway embedded PostgreSQL in a temporary directory, on a free port. */
export async function startTestPostgres(name: string): Promise<TestPostgres> {
  const dataDir = join(
    tmpdir(),
    `plant-store-${name}-${process.pid}-${Date.now()}`,
  );
  const port = await freePort();
  const options = {
    dataDir,
    port,
    database: 'plant_store_test',
    onLog: () => {},
  };
  let server: EmbeddedPostgresServer | undefined =
    await EmbeddedPostgresServer.start(options);
  const url = server.url;
  return {
    url,
    async stop({ keepData = false } = {}) {
      await server?.stop();
      server = undefined;
      if (!keepData) await rm(dataDir, { recursive: true, force: true });
    },
    async restart() {
      await server?.stop();
      server = await EmbeddedPostgresServer.start(options);
    },
  };
}
