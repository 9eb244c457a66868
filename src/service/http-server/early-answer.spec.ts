import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { useListening } from '../../../test/support/node-server.js';
import { eventually } from '../../../test/support/poll.js';
import {
  isWholeResponse,
  parseResponse,
} from '../../../test/support/raw-http.js';
import { earlyAnswerRule } from './early-answer.js';

const SMALL = 1024;
const BIG = 2 * 1024 * 1024;

describe('earlyAnswerRule: an answer sent before its body arrived', () => {
  let server: Server;
  let port: number;
  /** How much the server side of each connection read, once it closed. */
  let serverSides: Array<Promise<{ bytesRead: number }>>;

  beforeEach(async () => {
    serverSides = [];
    const rule = earlyAnswerRule(SMALL);
    // Every request is answered at once, before its body is read.
    server = createServer((request, response) => {
      rule(request, response);
      response.writeHead(413, { 'Content-Length': '2' });
      response.end('no');
    });
    // As the service's server does (front-door.ts): no automatic 100 Continue.
    server.on('checkContinue', (request, response) =>
      server.emit('request', request, response),
    );
    server.on('connection', (socket: Socket) =>
      serverSides.push(
        new Promise((resolve) =>
          socket.once('close', () => resolve({ bytesRead: socket.bytesRead })),
        ),
      ),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  async function client(): Promise<{
    socket: Socket;
    received: () => string;
    closed: Promise<unknown>;
  }> {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    return { socket, received: () => text, closed };
  }

  const head = (headers: string): string =>
    `POST / HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

  it('reads and drops a small declared body, and keeps the connection for the next request', async () => {
    const { socket, received } = await client();
    socket.write(head(`Content-Length: ${SMALL}\r\n`));
    await until(() => isWholeResponse(received()));
    expect(parseResponse(received()).headers.connection).toBe('keep-alive');
    socket.write('x'.repeat(SMALL) + head('Content-Length: 0\r\n'));
    await until(() => received().split('HTTP/1.1 413').length === 3);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it.each([
    ['declares more than the small size', `Content-Length: ${BIG}\r\n`],
    ['is chunked', 'Transfer-Encoding: chunked\r\n'],
    [
      'waits for 100 Continue',
      'Content-Length: 10\r\nExpect: 100-continue\r\n',
    ],
  ])(
    'closes the connection of one that %s, yet reads what the client sends until it is done',
    async (_case, headers) => {
      const { socket, received, closed } = await client();
      // Nothing is read on this side until the server is done: had it closed with bytes
      // unread, the kernel would have reset the connection and dropped the answer.
      socket.pause();
      socket.write(head(headers));
      const body = headers.includes('chunked')
        ? `${(BIG / 2).toString(16)}\r\n${'x'.repeat(BIG / 2)}\r\n0\r\n\r\n`
        : headers.includes('Expect')
          ? 'x'.repeat(10)
          : 'x'.repeat(BIG);
      socket.write(body);
      const { bytesRead } = await serverSides[0];
      socket.resume();
      await closed;
      const answer = parseResponse(received());
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(answer.body).toBe('no');
      expect(bytesRead).toBeGreaterThanOrEqual(Buffer.byteLength(body));
    },
  );

  it('lingers on the close of a small body the client sends only after the answer, when the connection closes after it', async () => {
    const { socket, received } = await client();
    // Still sending after the server's FIN, as a client uploading does.
    socket.allowHalfOpen = true;
    socket.write(head(`Content-Length: ${SMALL}\r\nConnection: close\r\n`));
    await until(() => isWholeResponse(received()));
    expect(parseResponse(received()).headers.connection).toBe('close');
    // Sent after the answer: read, not met with a reset.
    socket.write('x'.repeat(SMALL));
    const { bytesRead } = await serverSides[0];
    expect(bytesRead).toBe(
      Buffer.byteLength(
        head(`Content-Length: ${SMALL}\r\nConnection: close\r\n`),
      ) + SMALL,
    );
  });
});

describe('earlyAnswerRule: an answer sent after 100 Continue, before the body', () => {
  const rule = earlyAnswerRule(SMALL);
  const served = useListening(undefined, {
    prepare: (server) =>
      server.on('checkContinue', (request, response) => {
        response.writeContinue();
        rule(request, response);
        response.writeHead(413, { 'Content-Length': '2' });
        response.end('no');
      }),
  });

  it('closes the connection of a small body that waited for 100 Continue, though it was sent', async () => {
    const connection = await served.open();
    connection.write(
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n',
    );
    const text = await connection.until((received) =>
      isWholeResponse(received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')),
    );
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    const answer = parseResponse(
      text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length),
    );
    expect([answer.status, answer.headers.connection]).toEqual([413, 'close']);
  });
});

describe('earlyAnswerRule: an answer sent once its body has arrived', () => {
  const rule = earlyAnswerRule(SMALL);
  // Every request is answered once its whole body was read.
  const served = useListening((request, response) => {
    rule(request, response);
    request.resume();
    request.once('end', () => {
      response.writeHead(201, { 'Content-Length': '2' });
      response.end('ok');
    });
  });

  it('keeps the connection of a large body read to its end', async () => {
    const connection = await served.open();
    const body = 'x'.repeat(BIG);
    const first = await connection.ask(
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${BIG}\r\n\r\n${body}`,
    );
    expect([first.status, first.headers.connection]).toEqual([
      201,
      'keep-alive',
    ]);
    expect(connection.socket.destroyed).toBe(false);
  });
});

function until(condition: () => boolean): Promise<true> {
  return eventually('the answers', () => (condition() ? true : undefined));
}
