import {
  createServer,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListeningServer {
  server: Server;
  port: number;
  url: string;
  /** Ends every connection and closes the server. */
  close(): Promise<void>;
}

/**
 * A Node HTTP server on a free loopback port, for specs of what runs on Node's objects; as
 * the service's (service-server.ts), it leaves the Host check to the front door.
 */
export async function listening(
  listener?: RequestListener,
  {
    options,
    prepare,
  }: { options?: ServerOptions; prepare?: (server: Server) => void } = {},
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
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
