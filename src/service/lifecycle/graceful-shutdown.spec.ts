import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpAdapterHost } from '@nestjs/core';
import { useListening } from '../../../test/support/node-server.js';
import { eventually } from '../../../test/support/poll.js';
import {
  connectError,
  parseResponse,
  type RawConnection,
} from '../../../test/support/raw-http.js';
import { GracefulShutdown } from './graceful-shutdown.js';
import { ShutdownState } from './shutdown-state.js';

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe('GracefulShutdown', () => {
  let state: ShutdownState;
  let shutdown: GracefulShutdown;
  /** Requests to /held wait here until the test answers them. */
  let held: ServerResponse[];
  const door = useListening(
    (request: IncomingMessage, response: ServerResponse) => {
      shutdown.track(response);
      if (request.url === '/held') held.push(response);
      else response.writeHead(200, { 'Content-Length': '2' }).end('ok');
    },
  );
  const open = () => door.open();

  beforeEach(() => {
    held = [];
    state = new ShutdownState();
    const adapterHost = {
      httpAdapter: { getHttpServer: () => door.server },
    } as unknown as HttpAdapterHost;
    shutdown = new GracefulShutdown(adapterHost, state);
  });

  async function heldRequest(): Promise<RawConnection> {
    const connection = await open();
    const count = held.length;
    connection.write(GET('/held'));
    await eventually('the request to arrive', () =>
      held.length > count ? true : undefined,
    );
    return connection;
  }

  it('closes the listener and idle connections, lets a running request finish with Connection: close, and resolves once it has', async () => {
    const idle = await open();
    await idle.ask(GET('/'));
    const running = await heldRequest();

    let drained = false;
    const drain = shutdown
      .drain({ delayMs: 0, timeoutMs: 60_000 })
      .then(() => (drained = true));
    expect(state.isShuttingDown).toBe(true);
    await idle.closed;
    expect(await connectError(door.port)).toBe('ECONNREFUSED');
    expect(drained).toBe(false);

    held[0].writeHead(200, { 'Content-Length': '4' }).end('done');
    const answer = parseResponse(await running.closed);
    expect(answer.body).toBe('done');
    expect(answer.headers.connection).toBe('close');
    await drain;
  });

  it('keeps serving through the delay, each answer with Connection: close', async () => {
    const drain = shutdown.drain({ delayMs: 60_000, timeoutMs: 60_000 });
    const during = await open();
    const answer = await during.ask(GET('/'));
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    shutdown.hurry();
    await drain;
  });

  it('closes the connections of requests still running at the timeout', async () => {
    const running = await heldRequest();
    await shutdown.drain({ delayMs: 0, timeoutMs: 50 });
    // Cut off without an answer.
    expect(await running.closed).toBe('');
  });

  it('cuts the delay and the drain short when told to hurry', async () => {
    const running = await heldRequest();
    const drain = shutdown.drain({ delayMs: 60_000, timeoutMs: 60_000 });
    shutdown.hurry();
    await drain;
    expect(await running.closed).toBe('');
    expect(door.server.listening).toBe(false);
  });
});
