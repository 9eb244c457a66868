import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import {
  listenedAsNestAsks,
  servingOnLoopback,
} from '../../../test/support/timed-adapter.js';
import {
  SETTINGS,
  SETTINGS_TIMEOUTS,
  timeoutsOf,
} from '../../../test/support/timed-server.js';
import { TimedFastifyAdapter } from './timed-fastify.adapter.js';

describe('TimedFastifyAdapter', () => {
  let adapter: TimedFastifyAdapter;
  beforeEach(() => {
    adapter = new TimedFastifyAdapter(SETTINGS);
  });
  afterEach(() => adapter.close());

  const fastify = (): FastifyInstance => adapter.getInstance<FastifyInstance>();

  /** Starts with `options` and listens on a free loopback port, the front door being Fastify's handler alone; the base URL. */
  function listen(options: NestApplicationOptions = {}): Promise<string> {
    adapter.initHttpServer(options);
    return servingOnLoopback(adapter, adapter.requestListener);
  }

  it("runs Fastify on the service's server, with its timeouts and no listener of Fastify's", () => {
    adapter.initHttpServer({});
    const server = adapter.getHttpServer() as Server;
    expect(server).toBe(fastify().server);
    expect(timeoutsOf(server)).toEqual(SETTINGS_TIMEOUTS);
    expect(adapter.requestListener).toBeTypeOf('function');
  });

  it("keeps FastifyAdapter's own options: return503OnClosing answers 503 once the application closes", async () => {
    fastify().get('/plants', () => 'plants');
    const url = await listen({ return503OnClosing: true });
    expect((await fetch(`${url}/plants`)).status).toBe(200);
    adapter.beforeClose();
    expect((await fetch(`${url}/plants`)).status).toBe(503);
  });

  it('refuses to start with HTTPS', () => {
    expect(() => adapter.initHttpServer({ httpsOptions: {} })).toThrow(
      'HTTPS is terminated in front of this service, not by it.',
    );
  });

  it('listens with the accept queue of its settings, on the host given, and calls back once listening', async () => {
    const { server, returned, listen } = await listenedAsNestAsks(adapter);
    expect(returned).toBe(server);
    // Fastify hands its own callback in the options.
    expect(listen).toHaveBeenCalledWith(
      expect.objectContaining({ port: 0, host: '127.0.0.1', backlog: 44 }),
    );
    expect(server.listening).toBe(true);
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
  });

  it('answers through the handler Fastify gave the server, routing as Express does: any case, a trailing slash or none', async () => {
    fastify().get('/plants/Today', () => 'today');
    const url = await listen();
    const answers = [];
    for (const path of ['/plants/Today', '/PLANTS/today', '/plants/today/'])
      answers.push(await (await fetch(url + path)).text());
    expect(answers).toEqual(['today', 'today', 'today']);
  });
});
