import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, ErrorAnswer } from '../../lib/index.js';
import { lingeringClose } from './lingering-close.js';

type ConnectionListener = (this: Server, socket: Socket) => void;

/**
 * At most `max` connections (0: no cap); past it the overload 503 before any parsing, then a lingering
 * close (bench/RESULTS.md#2026-11-26-issue-20-items-4-5-overload-from-many-connections-on-a-c-load-generator).
 * Takes over Node's one 'connection' listener; fails at start should Node change that.
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
