import { type INestApplication, Module } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import {
  ApiErrorsModule,
  MetricsService,
  TokenVerifier,
} from '../../lib/index.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { HealthModule } from './health.module.js';

class ReadyTokens extends TokenVerifier {
  verify(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
}

/** The application's own AuthModule, as far as the probes ask it. */
@Module({
  providers: [{ provide: TokenVerifier, useClass: ReadyTokens }],
  exports: [TokenVerifier],
})
class TokensModule {}

const PROBES = ['/health/live', '/health/ready', '/health'];

describe.each([
  ['Express', (): AbstractHttpAdapter => new ExpressAdapter()],
  ['Fastify', (): AbstractHttpAdapter => new FastifyAdapter()],
])('HealthModule.forRoot on %s', (_adapter, adapter) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        // Not connected: the database is connected once the process listens (DatabaseStartup).
        AppConfigModule.forRoot(
          validateEnvironment({
            DATABASE_URL: 'postgres://nobody@127.0.0.1:9/nowhere',
            INSTANCE_ID: 'probe-1',
          }),
        ),
        ApiErrorsModule,
        HealthModule.forRoot({ module: TokensModule }),
      ],
    }).compile();
    app = moduleRef.createNestApplication(adapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers liveness, and readiness and health 503 until the database has started', async () => {
    const live = await fetch(`${url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok', instance: 'probe-1' });
    for (const path of ['/health/ready', '/health']) {
      const answer = await fetch(`${url}${path}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(await answer.json()).toEqual({
        error: 503,
        message:
          'The service is not ready: it is starting (its database has not answered yet).',
      });
    }
  });

  it('answers HEAD on a probe as GET, without a body', async () => {
    const answer = await fetch(`${url}/health/live`, { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    'answers %s on each probe 405 with Allow: GET, HEAD',
    async (method) => {
      for (const path of PROBES) {
        const answer = await fetch(`${url}${path}`, { method });
        expect({ path, status: answer.status }).toEqual({ path, status: 405 });
        expect(answer.headers.get('allow')).toBe('GET, HEAD');
        expect(await answer.json()).toEqual({
          error: 405,
          message: 'This method is not allowed on this path.',
        });
      }
    },
  );

  it('documents GET on each probe, and no refusing route', () => {
    const { paths } = SwaggerModule.createDocument(app, {
      openapi: '3.0.0',
      info: { title: 'probes', version: '1' },
    });
    expect(
      Object.fromEntries(
        Object.entries(paths).map(([path, operations]) => [
          path,
          Object.keys(operations),
        ]),
      ),
    ).toEqual({
      '/health/live': ['get'],
      '/health/ready': ['get'],
      '/health': ['get'],
    });
  });

  it('publishes the gauges with their help', async () => {
    const { body } = await app.get(MetricsService).render();
    expect(body).toContain(
      '# HELP database_can_commit 1 unless the database is known not to commit now (creates are then refused at once, 503); 0 before it first answered\n' +
        '# TYPE database_can_commit gauge\n' +
        'database_can_commit 0\n',
    );
    expect(body).toContain(
      '# HELP service_ready 1 while GET /health/ready answers 200 (started, not shutting down)\n' +
        '# TYPE service_ready gauge\n' +
        'service_ready 0\n',
    );
  });
});
