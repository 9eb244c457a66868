import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller } from '@nestjs/common';
import { ApplicationConfig } from '@nestjs/core';
import {
  FastifyAdapter,
  type NestFastifyApplication,
} from '@nestjs/platform-fastify';
import { PlantRoutes } from '../../lib/index.js';
import { TimedExpressAdapter } from '../http-server/timed-express.adapter.js';
import { CreateAdmission } from './create-admission.js';
import { shedAtExpressRoute, shedAtFastifyRoute } from './create-route.js';

@Controller('plants')
class CreateController {}

/** What shedAtFastifyRoute asks of the application: its config, PlantRoutes, the admission. */
function applicationWith(globalPrefix: string, admission: object) {
  const config = new ApplicationConfig();
  config.setGlobalPrefix(globalPrefix);
  const providers = new Map<unknown, unknown>([
    [ApplicationConfig, config],
    [PlantRoutes, new PlantRoutes(CreateController)],
    [CreateAdmission, admission],
  ]);
  return {
    get: (token: unknown) => providers.get(token),
  } as unknown as NestFastifyApplication;
}

/** An admission that lets every request through, and records what it was handed. */
function passingAdmission() {
  return vi.fn(
    (_request: IncomingMessage, _response: ServerResponse, next: () => void) =>
      next(),
  );
}

describe('shedAtFastifyRoute', () => {
  it("puts the admission on the create's POST route alone, below the global prefix", async () => {
    const atRoute = passingAdmission();
    const fastify = new FastifyAdapter().getInstance();
    shedAtFastifyRoute(applicationWith('api', { atRoute }), fastify);
    fastify.post('/api/plants', () => 'created');
    fastify.get('/api/plants', () => 'read');
    fastify.post('/plants', () => 'elsewhere');

    const created = await fastify.inject({
      method: 'POST',
      url: '/api/plants',
    });
    expect(created.body).toBe('created');
    expect(atRoute).toHaveBeenCalledTimes(1);
    expect(atRoute.mock.calls[0]?.[0].url).toBe('/api/plants');

    for (const [method, url] of [
      ['GET', '/api/plants'],
      ['POST', '/plants'],
    ] as const)
      expect((await fastify.inject({ method, url })).statusCode).toBe(200);
    expect(atRoute).toHaveBeenCalledTimes(1);
    await fastify.close();
  });

  it('stops the start, naming the path, when no POST route is the create', async () => {
    const fastify = new FastifyAdapter().getInstance();
    shedAtFastifyRoute(applicationWith('', { atRoute: vi.fn() }), fastify);
    fastify.post('/garden/plants', () => 'created');
    fastify.get('/plants', () => 'read');

    await expect(fastify.ready()).rejects.toThrow(
      'No POST route at /plants for load shedding',
    );
  });
});

const SERVER_SETTINGS = {
  HTTP_HEADERS_TIMEOUT_MS: 10_000,
  HTTP_REQUEST_TIMEOUT_MS: 30_000,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 65_000,
  HTTP_LISTEN_BACKLOG: 511,
};

/** `method url` against Express's handler on a server of its own: the body it answers. */
async function answer(
  handler: RequestListener,
  method: string,
  url: string,
): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}${url}`, { method });
    return await response.text();
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('shedAtExpressRoute', () => {
  it("puts the admission first on the create's POST route alone, below the global prefix, whatever the path's case", async () => {
    const atRoute = passingAdmission();
    const express = new TimedExpressAdapter(SERVER_SETTINGS);
    shedAtExpressRoute(applicationWith('api', { atRoute }), express);
    const reply =
      (text: string) => (_request: IncomingMessage, response: ServerResponse) =>
        response.end(text);
    express.post('/api/plants', reply('created'));
    express.get('/api/plants', reply('read'));
    express.post('/plants', reply('elsewhere'));
    const handler = express.getInstance<RequestListener>();

    expect(await answer(handler, 'POST', '/api/plants')).toBe('created');
    expect(await answer(handler, 'POST', '/API/Plants/')).toBe('created');
    expect(atRoute).toHaveBeenCalledTimes(2);
    expect(await answer(handler, 'GET', '/api/plants')).toBe('read');
    expect(await answer(handler, 'POST', '/plants')).toBe('elsewhere');
    expect(atRoute).toHaveBeenCalledTimes(2);
  });

  it('stops the start, naming the path, when no POST route is the create', () => {
    const express = new TimedExpressAdapter(SERVER_SETTINGS);
    shedAtExpressRoute(applicationWith('', { atRoute: vi.fn() }), express);
    express.post('/garden/plants', vi.fn());
    express.get('/plants', vi.fn());

    expect(() => express.listen(0)).toThrow(
      'No POST route at /plants for load shedding',
    );
  });
});
