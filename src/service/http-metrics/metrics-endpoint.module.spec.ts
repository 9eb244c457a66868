import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { freePort } from '../../../test-kit/free-port.mjs';
import { ApiErrorsModule, MetricsService } from '../../lib/index.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { MetricsEndpointModule } from './metrics-endpoint.module.js';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const NOT_FOUND = { error: 404, message: 'No resource exists at this path.' };

async function appOn(
  adapter: () => AbstractHttpAdapter,
  env: Record<string, string>,
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      AppConfigModule.forRoot(
        validateEnvironment({ HOST: '127.0.0.1', ...env }),
      ),
      ApiErrorsModule,
      MetricsEndpointModule,
    ],
  }).compile();
  const app = moduleRef.createNestApplication(adapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: await app.getUrl() };
}

describe.each([
  ['Express', (): AbstractHttpAdapter => new ExpressAdapter()],
  ['Fastify', (): AbstractHttpAdapter => new FastifyAdapter()],
])('MetricsEndpointModule on %s', (_adapter, adapter) => {
  describe('by default', () => {
    let app: INestApplication;
    let url: string;
    beforeAll(async () => {
      ({ app, url } = await appOn(adapter, {}));
      app
        .get(MetricsService)
        .gauge('spec_gauge', 'a gauge of the spec', () => 3);
    });
    afterAll(async () => {
      await app.close();
    });

    it('serves the registry at GET /metrics, in the Prometheus text format', async () => {
      const answer = await fetch(`${url}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
      expect(await answer.text()).toContain(
        '# HELP spec_gauge a gauge of the spec\n# TYPE spec_gauge gauge\nspec_gauge 3\n',
      );
    });

    it('answers another method 405 with Allow: GET, HEAD', async () => {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const answer = await fetch(`${url}/metrics`, { method });
        expect({ method, status: answer.status }).toEqual({
          method,
          status: 405,
        });
        expect(answer.headers.get('allow')).toBe('GET, HEAD');
        expect(await answer.json()).toEqual({
          error: 405,
          message: 'This method is not allowed on this path.',
        });
      }
    });
  });

  describe.each([
    ['metrics are off', async () => ({ METRICS_ENABLED: 'false' })],
    [
      'metrics are on a port of their own',
      async () => ({ METRICS_PORT: String(await freePort()) }),
    ],
  ])('when %s', (_case, env) => {
    let app: INestApplication;
    let url: string;
    beforeAll(async () => {
      ({ app, url } = await appOn(adapter, await env()));
    });
    afterAll(async () => {
      await app.close();
    });

    it('answers /metrics on the API port 404, whatever the method', async () => {
      for (const method of ['GET', 'POST']) {
        const answer = await fetch(`${url}/metrics`, { method });
        expect({ method, status: answer.status }).toEqual({
          method,
          status: 404,
        });
        expect(await answer.json()).toEqual(NOT_FOUND);
      }
    });
  });
});
