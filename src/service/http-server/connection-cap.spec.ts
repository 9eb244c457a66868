import { once } from 'node:events';
import { createServer } from 'node:http';
import { useListening } from '../../../test/support/node-server.js';
import {
  parseResponse,
  type RawConnection,
} from '../../../test/support/raw-http.js';
import { capConnections } from './connection-cap.js';

const GET = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

describe('capConnections', () => {
  const door = useListening(
    (_request, response) =>
      response.writeHead(200, { 'Content-Length': '2' }).end('ok'),
    { prepare: (server) => capConnections(server, 2) },
  );
  const open = () => door.open();

  /** The status of a GET on `connection`: a refused one has its whole 503 before it closes. */
  async function served(connection: RawConnection): Promise<number> {
    return (await connection.ask(GET)).status;
  }

  it('serves up to the cap, answers the next connection with the overload 503 before any request, and serves again once one closes', async () => {
    const [first, second] = [await open(), await open()];
    expect([await served(first), await served(second)]).toEqual([200, 200]);

    const third = await open();
    // Written before anything is asked: the refusal does not wait for a request.
    const refusal = parseResponse(await third.closed);
    expect(refusal.status).toBe(503);
    expect(refusal.headers.connection).toBe('close');
    expect(refusal.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refusal.body)).toMatchObject({ error: 503 });

    first.socket.destroy();
    await once(first.socket, 'close');
    // The server learns of the close a moment later.
    let status: number | undefined;
    for (let attempt = 0; status !== 200 && attempt < 100; attempt += 1)
      status = await served(await open());
    expect(status).toBe(200);
  });

  it("takes over Node's connection listener: connections reach Node only through the cap", () => {
    const server = createServer();
    const [node] = server.listeners('connection');
    capConnections(server, 1);
    const listeners = server.listeners('connection');
    expect(listeners).toHaveLength(1);
    expect(listeners).not.toContain(node);
  });

  it('leaves a server alone with a cap of 0', () => {
    const server = createServer();
    const listeners = server.listeners('connection');
    capConnections(server, 0);
    expect(server.listeners('connection')).toEqual(listeners);
  });

  it('refuses to start on a server that does not serve from one connection listener', () => {
    const server = createServer();
    server.on('connection', () => undefined);
    expect(() => capConnections(server, 1)).toThrow(
      "Expected Node's HTTP server to serve connections from one 'connection' listener, found 2.",
    );
  });
});
