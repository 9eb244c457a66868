import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { eventually } from '../../../test/support/poll.js';
import {
  isLingering,
  LINGER_BOUNDS,
  lingerAfterEarlyAnswer,
  lingerIfClosed,
  lingeringClose,
} from './lingering-close.js';

/** The client's side of a connection: what it read, whether the server half-closed, errors. */
interface Client {
  socket: Socket;
  received: () => number;
  text: () => string;
  ended: () => boolean;
  errors: Error[];
  closed: Promise<unknown>;
}

describe('lingeringClose: a close that lets the client finish sending', () => {
  let server: Server;
  let sockets: Socket[];

  beforeEach(async () => {
    sockets = [];
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });

  afterEach(async () => {
    vi.useRealTimers();
    for (const socket of sockets) socket.destroy();
    server.close();
    await once(server, 'close');
  });

  /** A connection: the server's socket and the client's. */
  async function connection(): Promise<{ served: Socket; client: Client }> {
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const socket = connect(
      (server.address() as { port: number }).port,
      '127.0.0.1',
    );
    const [[served]] = await Promise.all([accepted, once(socket, 'connect')]);
    sockets.push(served, socket);
    let bytes = 0;
    let text = '';
    let ended = false;
    const errors: Error[] = [];
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (text.length < 100) text += chunk.toString('latin1');
    });
    socket.on('end', () => (ended = true));
    socket.on('error', (error) => errors.push(error));
    // The client keeps its side open after the server's FIN, as a client still sending does.
    socket.allowHalfOpen = true;
    const closed = once(socket, 'close');
    return {
      served,
      client: {
        socket,
        received: () => bytes,
        text: () => text,
        ended: () => ended,
        errors,
        closed,
      },
    };
  }

  const until = (what: string, condition: () => boolean): Promise<true> =>
    eventually(what, () => (condition() ? true : undefined));

  it('half-closes after the answer, reads and drops what the client still sends, and closes once the client is done', async () => {
    const { served, client } = await connection();
    expect(isLingering(served)).toBe(false);
    served.write('answer');
    lingeringClose(served, served);
    expect(isLingering(served)).toBe(true);

    await until('the FIN', client.ended);
    expect(client.text()).toBe('answer');
    // Sent after the answer: read and dropped, where an unread close would reset.
    const late = Buffer.alloc(1024 * 1024, 'x');
    client.socket.write(late);
    await until('the late bytes read', () => served.bytesRead === late.length);
    expect(served.destroyed).toBe(false);

    // Closed as the client's end arrives (the idle bound would close it later).
    const ended = once(served, 'end');
    client.socket.end();
    await ended;
    expect(served.destroyed).toBe(true);
    await client.closed;
    expect(client.errors).toEqual([]);
  });

  it('closes as the client is done, though the request it reads has not ended', async () => {
    const { served, client } = await connection();
    lingeringClose(served, new PassThrough());
    await until('the FIN', client.ended);

    const ended = once(served, 'end');
    client.socket.end();
    await ended;
    expect(served.destroyed).toBe(true);
  });

  it('waits for the answer to have left before closing on a request already in', async () => {
    const { served, client } = await connection();
    const incoming = new PassThrough();
    incoming.end();
    incoming.resume();
    await once(incoming, 'end');
    // More than the socket can send at once: a close before it has left would cut it.
    const answer = Buffer.alloc(8 * 1024 * 1024, 'a');
    served.write(answer);
    lingeringClose(served, incoming);
    expect(served.destroyed).toBe(false);

    // Closed as the answer has left (the idle bound would close it later).
    await once(served, 'finish');
    expect(served.destroyed).toBe(true);
    await until('the FIN', client.ended);
    expect(client.received()).toBe(answer.length);
    expect(client.errors).toEqual([]);
  });

  it('closes once the request it reads has ended, whatever the client does', async () => {
    const { served, client } = await connection();
    const incoming = new PassThrough();
    lingeringClose(served, incoming);
    await until('the FIN', client.ended);
    expect(served.destroyed).toBe(false);

    const ended = once(incoming, 'end');
    incoming.end('the rest of the body');
    await ended;
    expect(served.destroyed).toBe(true);
    expect(client.errors).toEqual([]);
  });

  it('closes after LINGER_BOUNDS.timeMs however busy the client keeps it, and clears that deadline on an earlier close', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { served, client } = await connection();
    lingeringClose(served, served);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(LINGER_BOUNDS.timeMs - 1);
    expect(served.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(served.destroyed).toBe(true);
    expect(client.errors).toEqual([]);

    const second = await connection();
    lingeringClose(second.served, second.served);
    second.client.socket.end();
    await second.client.closed;
    await until('the close', () => second.served.closed);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('closes a client idle for LINGER_BOUNDS.idleMs, or on a socket error', async () => {
    const idle = await connection();
    lingeringClose(idle.served, idle.served);
    expect(idle.served.timeout).toBe(LINGER_BOUNDS.idleMs);
    // The idle time itself is Node's to measure: its event is what ends the wait.
    idle.served.emit('timeout');
    expect(idle.served.destroyed).toBe(true);

    const failing = await connection();
    lingeringClose(failing.served, failing.served);
    failing.served.emit('error', new Error('read ECONNRESET'));
    expect(failing.served.destroyed).toBe(true);
  });

  it('lingers once: a second close, or one of a destroyed socket, does nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { served } = await connection();
    const end = vi.spyOn(served, 'end');
    lingeringClose(served, served);
    lingeringClose(served, served);
    expect(vi.getTimerCount()).toBe(1);
    expect(end).toHaveBeenCalledOnce();

    const destroyed = await connection();
    destroyed.served.destroy();
    const endDestroyed = vi.spyOn(destroyed.served, 'end');
    lingeringClose(destroyed.served);
    expect(vi.getTimerCount()).toBe(1);
    expect(endDestroyed).not.toHaveBeenCalled();
    expect(isLingering(destroyed.served)).toBe(false);
  });

  it('reads and drops up to LINGER_BOUNDS.bytes, then reads no more', async () => {
    const { served } = await connection();
    const incoming = new PassThrough({ highWaterMark: 1 });
    lingeringClose(served, incoming);
    incoming.write(Buffer.alloc(LINGER_BOUNDS.bytes));
    await until('the bytes read', () => incoming.readableLength === 0);
    expect(incoming.isPaused()).toBe(false);

    incoming.write(Buffer.alloc(1));
    await until('the reading stopped', () => incoming.isPaused());
    incoming.write(Buffer.alloc(10));
    expect(incoming.readableLength).toBe(10);
    expect(incoming.listenerCount('data')).toBe(0);
  });

  it('leaves a socket alone until Node closes it: lingerIfClosed makes its destroySoon the lingering close', async () => {
    const { served, client } = await connection();
    const request = Object.assign(new PassThrough(), { socket: served });
    lingerIfClosed(request as unknown as IncomingMessage);
    expect(isLingering(served)).toBe(false);
    expect(client.ended()).toBe(false);

    served.destroySoon();
    expect(isLingering(served)).toBe(true);
    await until('the FIN', client.ended);
    expect(served.destroyed).toBe(false);
    // Read to its end, as the front door reads a small body.
    request.resume();
    const ended = once(request, 'end');
    request.end();
    await ended;
    expect(served.destroyed).toBe(true);
  });

  it('marks an early answer as lingering at once, drops the rest of its request, and lingers when Node closes', async () => {
    const { served, client } = await connection();
    const request = Object.assign(new PassThrough(), { socket: served });
    request.pause();
    lingerAfterEarlyAnswer(request as unknown as IncomingMessage);
    expect(isLingering(served)).toBe(true);
    expect(request.isPaused()).toBe(false);
    expect(client.ended()).toBe(false);

    request.write('more of the body');
    await until('the body read', () => request.readableLength === 0);
    served.destroySoon();
    await until('the FIN', client.ended);
    expect(served.destroyed).toBe(false);
    const ended = once(request, 'end');
    request.end();
    await ended;
    expect(served.destroyed).toBe(true);
  });
});
