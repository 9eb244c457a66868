import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { Environment } from './config/environment.js';
import { DatabaseStartup } from './database/database-startup.js';
import { openFrontDoor } from './front-door.js';
import type { ServiceAdapter } from './service-adapter.js';

/** Loads only HTTP_ADAPTER's adapter (bench/RESULTS.md#2026-11-28-issue-42-item-4-where-a-starts-time-goes-quiet-and-busy). */
async function serviceAdapter(env: Environment): Promise<ServiceAdapter> {
  return env.HTTP_ADAPTER === 'fastify'
    ? (await import('./fastify-door.js')).fastifyAdapter(env)
    : (await import('./express-door.js')).expressAdapter(env);
}

/** The service exactly as it runs, for bootstrap.ts and the e2e tests; `beforeDatabase`: resolves before it connects. */
export async function createApp(
  env: Environment,
  { beforeDatabase = false }: { beforeDatabase?: boolean } = {},
): Promise<INestApplication> {
  const adapter = await serviceAdapter(env);
  const app = await NestFactory.create<INestApplication>(
    AppModule.forRoot(env),
    adapter.nest,
    {
      // JSON bodies are read after authentication, by JsonBodyGuard.
      bodyParser: false,
      // Let a failed start reject, so main can print why and exit, instead of aborting.
      abortOnError: false,
      // Start-up messages wait for the configured logger instead of going to the console.
      bufferLogs: true,
    },
  );
  app.useLogger(app.get(Logger));
  app.flushLogs();
  openFrontDoor(app, adapter, env);
  if (!beforeDatabase) await app.get(DatabaseStartup).started;
  return app;
}
