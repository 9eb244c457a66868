import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/**
 * The bounds of a lingering close, the same for every early answer. Not settings: they
 * only decide how long a client that ignores `Connection: close` is tolerated, and 5 s
 * is a hundred round trips on the slowest network a client of this service is on.
 */
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
 * Closes a connection whose client may still be sending, after an answer already written
 * on it (RFC 9112, 9.6; nginx's lingering close). Closing at once with bytes unread makes
 * the kernel send a reset, and a reset can discard the answer from the client's receive
 * buffer before the client reads it (issue 40). Instead the server half-closes, so the
 * client reads the answer and then the end of the stream, and keeps reading and dropping
 * what still arrives on `incoming` until the first of:
 * - the client closes its side, or the request it was sending ends: nothing is left unread;
 * - nothing arrives for LINGER_BOUNDS.idleMs, or LINGER_BOUNDS.timeMs have passed.
 * Past LINGER_BOUNDS.bytes nothing more is read, so a client declaring a gigabyte costs
 * neither bandwidth nor CPU while its time runs out.
 *
 * `incoming` is what carries the client's bytes when no parser reads them (a connection
 * refused before parsing). Without one (a parser that failed reads nothing more) only the
 * time bounds apply.
 */
export function lingeringClose(socket: Socket, incoming?: Readable): void {
  if (incoming !== undefined) dropUpTo(incoming);
  closeAfterLinger(socket, incoming);
}

/**
 * For an answer about to be written before its request's body arrived, on a connection
 * that closes after it: the body is read and dropped from now on (before Node's server
 * would drain it without a bound), and the close lingers as lingeringClose's does.
 */
export function lingerAfterEarlyAnswer(request: IncomingMessage): void {
  dropUpTo(request);
  (request.socket as LingeringSocket)[LINGERING] = 'answered';
  lingerIfClosed(request);
}

/**
 * Should Node's server close the connection after this request's answer (the answer says
 * `Connection: close`), the close lingers until the request has arrived, within the bounds.
 */
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
