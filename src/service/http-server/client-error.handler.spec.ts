import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import {
  type AddressInfo,
  connect,
  createServer,
  type Server,
  type Socket,
} from 'node:net';
import { PassThrough } from 'node:stream';
import { useListening } from '../../../test/support/node-server.js';
import { parseResponse } from '../../../test/support/raw-http.js';
import { answerClientError } from './client-error.handler.js';
import { lingerAfterEarlyAnswer, lingeringClose } from './lingering-close.js';

describe('answerClientError: what Node’s parser refuses', () => {
  const door = useListening(
    (_request, response) => response.writeHead(204).end(),
    {
      prepare: (server) => server.on('clientError', answerClientError),
    },
  );

  async function refusalOf(request: string) {
    const connection = await door.open();
    connection.write(request);
    return parseResponse(await connection.closed);
  }

  it.each([
    ['a broken request line', 'NOT HTTP AT ALL\r\n\r\n', 400],
    [
      'headers past the size limit',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`,
      431,
    ],
  ])(
    'answers %s with %i, the Error body and a close',
    async (_case, request, status) => {
      const answer = await refusalOf(request);
      expect(answer.status).toBe(status);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ error: status });
    },
  );

  it('destroys a socket it can no longer write to, and writes nothing', () => {
    const socket = { writable: false, destroy: vi.fn(), write: vi.fn() };
    answerClientError(
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      socket as unknown as Socket,
    );
    expect(socket.destroy).toHaveBeenCalledOnce();
    expect(socket.write).not.toHaveBeenCalled();
  });
});

describe('answerClientError on a connection that closes by a lingering close', () => {
  let server: Server;
  const sockets: Socket[] = [];
  beforeEach(async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    server.close();
    await once(server, 'close');
  });

  /** The server's side of a new connection. */
  async function served(): Promise<Socket> {
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    client.on('error', () => undefined);
    const [[socket]] = await Promise.all([accepted, once(client, 'connect')]);
    sockets.push(socket, client);
    return socket;
  }

  const timeout = Object.assign(new Error('request timeout'), {
    code: 'ERR_HTTP_REQUEST_TIMEOUT',
  });

  it('writes nothing after an early answer, whose close lingers within its bounds', async () => {
    const socket = await served();
    const request = Object.assign(new PassThrough(), { socket });
    lingerAfterEarlyAnswer(request as unknown as IncomingMessage);
    const write = vi.spyOn(socket, 'write');
    answerClientError(timeout, socket);
    expect(write).not.toHaveBeenCalled();
    expect(socket.destroyed).toBe(false);
  });

  it('leaves a lingering close to run its course', async () => {
    const socket = await served();
    lingeringClose(socket, socket);
    answerClientError(timeout, socket);
    expect(socket.destroyed).toBe(false);
  });
});
