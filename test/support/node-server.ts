import {
  createServer,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RawConnection, RawConnections } from './raw-http.js';

export interface ListeningServer {
  server: Server;
  port: number;
  url: string;
  /** Ends every connection and closes the server, if it still listens. */
  close(): Promise<void>;
}

interface ServerSetUp {
  options?: ServerOptions;
  /** Listeners and the like, before it listens. */
  prepare?: (server: Server) => void;
}

/**
 * A Node HTTP server on a free loopback port, for specs of what runs on Node's objects; as
 * the service's (service-server.ts), it leaves the Host check to the front door.
 */
export async function listening(
  listener?: RequestListener,
  { options, prepare }: ServerSetUp = {},
): Promise<ListeningServer> {
  const server = createServer(
    { requireHostHeader: false, ...options },
    listener,
  );
  prepare?.(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      if (server.listening)
        await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface ServerUnderTest {
  readonly server: Server;
  readonly port: number;
  /** A raw connection to it, destroyed after the test. */
  open(): Promise<RawConnection>;
}

/** `listening` for each test of the describe it is called in, closed after it with its raw connections. */
export function useListening(
  listener?: RequestListener,
  setUp: ServerSetUp = {},
): ServerUnderTest {
  let current: ListeningServer | undefined;
  const connections = new RawConnections(() => current!.port);
  beforeEach(async () => {
    current = await listening(listener, setUp);
  });
  afterEach(async () => {
    connections.closeAll();
    await current?.close();
  });
  return {
    get server() {
      return current!.server;
    },
    get port() {
      return current!.port;
    },
    open: () => connections.open(),
  };
}
