import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** Not settings: only how long a client ignoring `Connection: close` is tolerated. */
export const LINGER_BOUNDS = {
  /** Longest a connection lingers after its answer, whatever the client does. */
  timeMs: 5_000,
  /** Longest the client may send nothing before the connection closes. */
  idleMs: 2_000,
  /** Most bytes read and dropped; past them nothing more is read (TCP holds the client). */
  bytes: 4 * 1024 * 1024,
} as const;

// 'answered': an early answer is on its way, and its close will linger; 'closing': lingering.
const LINGERING = Symbol('lingering');
type LingeringSocket = Socket & { [LINGERING]?: 'answered' | 'closing' };

/** Whether the connection has its answer, and closes (or will) by a lingering close. */
export function isLingering(socket: Socket): boolean {
  return (socket as LingeringSocket)[LINGERING] !== undefined;
}

/**
 * Half-closes, then drops what the client still sends within LINGER_BOUNDS: a close with bytes
 * unread sends a reset that can discard the answer (RFC 9112, 9.6).
 */
export function lingeringClose(socket: Socket, incoming?: Readable): void {
  if (incoming !== undefined) dropUpTo(incoming);
  closeAfterLinger(socket, incoming);
}

/** An early answer on a closing connection: drop the body from now on, and linger. */
export function lingerAfterEarlyAnswer(request: IncomingMessage): void {
  dropUpTo(request);
  (request.socket as LingeringSocket)[LINGERING] = 'answered';
  lingerIfClosed(request);
}

/** Should Node close the connection after this answer, the close lingers until the request has arrived. */
export function lingerIfClosed(request: IncomingMessage): void {
  const socket = request.socket;
  // Node's server ends a `Connection: close` answer with its socket's destroySoon, when
  // the socket has one (end() otherwise): this socket's own is the lingering close.
  socket.destroySoon = () => closeAfterLinger(socket, request);
}

function closeAfterLinger(socket: Socket, incoming?: Readable): void {
  const lingering = socket as LingeringSocket;
  if (lingering[LINGERING] === 'closing' || socket.destroyed) return;
  lingering[LINGERING] = 'closing';

  const deadline = setTimeout(() => socket.destroy(), LINGER_BOUNDS.timeMs);
  socket.once('close', () => clearTimeout(deadline));
  // Node's server destroys a socket whose timeout nobody handles; the callback does for a
  // socket no server serves. Data the parser reads restarts it, as any socket read does.
  socket.setTimeout(LINGER_BOUNDS.idleMs, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  // Once the answer has left: a destroy before that would drop it.
  const closeWhenSent = (): void => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  socket.once('end', closeWhenSent);
  if (incoming?.readableEnded === true) closeWhenSent();
  else incoming?.once('end', closeWhenSent);
  socket.end();
}

function dropUpTo(incoming: Readable): void {
  let dropped = 0;
  const drop = (chunk: Buffer): void => {
    dropped += chunk.length;
    if (dropped <= LINGER_BOUNDS.bytes) return;
    incoming.off('data', drop);
    incoming.pause();
  };
  incoming.on('data', drop);
  incoming.resume();
}
