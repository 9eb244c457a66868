import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, ErrorAnswer } from '../../lib/index.js';
import { lingeringClose } from './lingering-close.js';

type ConnectionListener = (this: Server, socket: Socket) => void;

/**
 * At most `max` connections served at once (0: no cap). Under overload, clients that may
 * open connections freely open one for each request their busy ones hold, and a new
 * connection costs the main thread more than a request on an open one (an HTTP parser,
 * its objects, their timers), so connections came in faster than the thread could take
 * them, the kernel's accept queue overflowed, and connections waited for SYN
 * retransmissions (1, 3, 7 s...) past the 10 s a client waits (bench/RESULTS.md,
 * 2026-11-26). A connection past the cap gets the overload 503 with Retry-After and
 * Connection: close at once, written on the socket before any parsing, the cheapest answer
 * there is, and a lingering close (lingering-close.ts). Node's own
 * server.maxConnections closes such connections with no answer at all.
 *
 * Node's HTTP server serves a connection from its one 'connection' listener, registered
 * when the server is made; this takes it over (the front door calls this first, before any
 * other listener exists), and fails at start should Node ever register it otherwise.
 */
export function capConnections(server: Server, max: number): void {
  if (max === 0) return;
  const listeners = server.listeners('connection') as ConnectionListener[];
  if (listeners.length !== 1)
    throw new Error(
      `Expected Node's HTTP server to serve connections from one 'connection' listener, found ${listeners.length}.`,
    );
  const [serve] = listeners;
  server.removeListener('connection', serve);
  const refusal = ErrorAnswer.of(
    ApiError.overloaded(),
    'close',
  ).toRawResponse();
  let served = 0;
  server.on('connection', (socket: Socket) => {
    if (served >= max) {
      refuse(socket, refusal);
      return;
    }
    served += 1;
    socket.once('close', () => (served -= 1));
    serve.call(server, socket);
  });
}

function refuse(socket: Socket, refusal: string): void {
  socket.write(refusal);
  lingeringClose(socket, socket);
}
