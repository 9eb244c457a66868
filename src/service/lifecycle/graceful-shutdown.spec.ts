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
import { captureNestLogs } from '../../../test/support/nest-logs.js';

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe('GracefulShutdown', () => {
  let state: ShutdownState;
  let shutdown: GracefulShutdown;
  /** Requests to /held wait here until the test answers them. */
  let held: ServerResponse[];
  /** What the drain logged, by level, all as 'Shutdown'. */
  let logged: [string, unknown][];
  let contexts: Set<unknown>;
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
    ({ logged, contexts } = captureNestLogs(['log', 'warn']));
    state = new ShutdownState();
    const adapterHost = {
      httpAdapter: { getHttpServer: () => door.server },
    } as unknown as HttpAdapterHost;
    shutdown = new GracefulShutdown(adapterHost, state);
  });

  afterEach(() => {
    vi.restoreAllMocks();
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

  /**
   * `running`'s request gets its whole answer ('done') with `connection`, then its connection
   * closes and the drain resolves, with nothing to say: no delay, nothing cut off.
   */
  async function expectFinishedThenDrained(
    running: RawConnection,
    connection: string,
    drain: Promise<unknown>,
  ): Promise<void> {
    const answer = parseResponse(await running.closed);
    expect(answer.body).toBe('done');
    expect(answer.headers.connection).toBe(connection);
    await drain;
    expect(logged).toEqual([]);
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
    await expectFinishedThenDrained(running, 'close', drain);
  });

  it('closes a connection that goes idle after its request, once the listener is closed', async () => {
    // Its head went out before the drain, without Connection: close: the client may reuse it.
    const running = await heldRequest();
    held[0].writeHead(200, { 'Content-Length': '4' });
    held[0].write('do');
    await running.until((text) => text.endsWith('do'));

    const drain = shutdown.drain({ delayMs: 0, timeoutMs: 60_000 });
    held[0].end('ne');
    await expectFinishedThenDrained(running, 'keep-alive', drain);
  });

  it('resolves at once when the listener is already closed and no connection is left, leaving no timer behind', async () => {
    await new Promise((resolve) => door.server.close(resolve));
    // The idle sweep's interval, which would keep the process alive.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      await shutdown.drain({ delayMs: 0, timeoutMs: 60_000 });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(state.isShuttingDown).toBe(true);
    expect(logged).toEqual([]);
  });

  it('keeps serving through the delay, each answer with Connection: close', async () => {
    const drain = shutdown.drain({ delayMs: 60_000, timeoutMs: 60_000 });
    const during = await open();
    const answer = await during.ask(GET('/'));
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    shutdown.hurry();
    await drain;
    expect(logged).toEqual([
      [
        'log',
        'Readiness is 503; still serving for 60000 ms so that load balancers stop sending',
      ],
      // Told to hurry, it does not wait for the listener to report closed.
      [
        'warn',
        'Told to hurry: closing the connections of 0 running request(s)',
      ],
    ]);
  });

  it('closes the connections of requests still running at the timeout', async () => {
    const running = await heldRequest();
    await shutdown.drain({ delayMs: 0, timeoutMs: 50 });
    // Cut off without an answer.
    expect(await running.closed).toBe('');
    expect(logged).toEqual([
      [
        'warn',
        '1 request(s) still running after 50 ms: closing their connections',
      ],
    ]);
  });

  it('cuts the delay and the drain short when told to hurry', async () => {
    const running = await heldRequest();
    const drain = shutdown.drain({ delayMs: 60_000, timeoutMs: 60_000 });
    shutdown.hurry();
    await drain;
    expect(await running.closed).toBe('');
    expect(door.server.listening).toBe(false);
    expect(logged).toEqual([
      [
        'log',
        'Readiness is 503; still serving for 60000 ms so that load balancers stop sending',
      ],
      [
        'warn',
        'Told to hurry: closing the connections of 1 running request(s)',
      ],
    ]);
    expect([...contexts]).toEqual(['Shutdown']);
  });
});
