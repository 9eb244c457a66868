import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller } from '@nestjs/common';
import { ApplicationConfig } from '@nestjs/core';
import {
  FastifyAdapter,
  type NestFastifyApplication,
} from '@nestjs/platform-fastify';
import { PlantRoutes } from '../../lib/plants/plant-routes.js';
import { CreateAdmission } from './create-admission.js';
import { shedAtFastifyRoute } from './create-route.js';

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

describe('shedAtFastifyRoute', () => {
  it("puts the admission on the create's POST route alone, below the global prefix", async () => {
    const atRoute = vi.fn(
      (
        _request: IncomingMessage,
        _response: ServerResponse,
        next: () => void,
      ) => next(),
    );
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
