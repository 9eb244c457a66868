import type {
  IncomingMessage,
  RequestListener,
  Server,
  ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  listenedAsNestAsks,
  servingOnLoopback,
} from '../../../test/support/timed-adapter.js';
import {
  SETTINGS,
  SETTINGS_TIMEOUTS,
  timeoutsOf,
} from '../../../test/support/timed-server.js';
import {
  type PostRouteHook,
  TimedExpressAdapter,
} from './timed-express.adapter.js';

/** A handler onPostRoute's hook may put first on a route. */
type Handler = NonNullable<ReturnType<PostRouteHook>>;

describe('TimedExpressAdapter', () => {
  let adapter: TimedExpressAdapter;
  beforeEach(() => {
    adapter = new TimedExpressAdapter(SETTINGS);
  });
  afterEach(async () => {
    const server = adapter.getHttpServer() as Server | undefined;
    server?.closeAllConnections();
    if (server?.listening)
      await new Promise((resolve) => server.close(resolve));
  });

  /** Listens on a free loopback port, Express answering; the base URL. */
  const listen = (): Promise<string> =>
    servingOnLoopback(adapter, adapter.getInstance<RequestListener>());

  it("serves on the service's server, with its timeouts and no listener of its own", () => {
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    expect(timeoutsOf(server)).toEqual(SETTINGS_TIMEOUTS);
  });

  it('refuses to start with HTTPS, making no server', () => {
    expect(() => adapter.initHttpServer({ httpsOptions: {} })).toThrow(
      'HTTPS is terminated in front of this service, not by it.',
    );
    expect(adapter.getHttpServer()).toBeUndefined();
  });

  it('listens with the accept queue of its settings, on the host given, and calls back once listening', async () => {
    const { server, returned, listen } = await listenedAsNestAsks(adapter);
    expect(returned).toBe(server);
    expect(listen).toHaveBeenCalledWith(
      { port: 0, host: '127.0.0.1', backlog: 44 },
      expect.any(Function),
    );
    expect(server.listening).toBe(true);
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('runs the checks given to beforeListen, in order, before it listens; a failing one stops it', () => {
    adapter.initHttpServer({});
    const ran: string[] = [];
    adapter.beforeListen(() => ran.push('first'));
    adapter.beforeListen(() => {
      ran.push('second');
      throw new Error('No route for this');
    });
    expect(() => adapter.listen(0, '127.0.0.1')).toThrow('No route for this');
    expect(ran).toEqual(['first', 'second']);
    expect((adapter.getHttpServer() as Server).listening).toBe(false);
  });

  it("puts onPostRoute's handler first on the POST routes it names, and on no other route", async () => {
    adapter.initHttpServer({});
    const asked: unknown[] = [];
    const ran: string[] = [];
    adapter.onPostRoute((path) => {
      asked.push(path);
      if (path !== '/hooked') return undefined;
      const first: Handler = (_request, _response, next) => {
        ran.push('hook');
        next();
      };
      return first;
    });
    const reply =
      (text: string): Handler =>
      (_request, response) => {
        ran.push(text);
        response.end(text);
      };
    adapter.post('/hooked', reply('hooked'));
    adapter.post('/plain', reply('plain'));
    adapter.post(/^\/pattern$/, reply('pattern'));
    // Nest's RequestHandler types its next loosely.
    adapter.get('/hooked', reply('read') as Parameters<typeof adapter.get>[1]);
    const url = await listen();

    const answers: string[] = [];
    for (const [method, path] of [
      ['POST', '/hooked'],
      ['POST', '/plain'],
      ['POST', '/pattern'],
      ['GET', '/hooked'],
    ])
      answers.push(await (await fetch(url + path, { method })).text());
    expect(answers).toEqual(['hooked', 'plain', 'pattern', 'read']);
    expect(ran).toEqual(['hook', 'hooked', 'plain', 'pattern', 'read']);
    // Asked of the POST routes with a path, as Nest registers them.
    expect(asked).toEqual(['/hooked', '/plain']);
  });

  it('leaves POST routes as they are without onPostRoute', async () => {
    adapter.initHttpServer({});
    adapter.post(
      '/plants',
      (_request: IncomingMessage, response: ServerResponse) =>
        response.end('created'),
    );
    const url = await listen();
    expect(
      await (await fetch(`${url}/plants`, { method: 'POST' })).text(),
    ).toBe('created');
  });
});
