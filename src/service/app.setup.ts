import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { Environment } from './config/environment.js';
import { DatabaseStartup } from './database/database-startup.js';
import { openFrontDoor } from './front-door.js';
import type { ServiceAdapter } from './service-adapter.js';

/**
 * The adapter HTTP_ADAPTER names: Express, the design's, unless told Fastify. Only that one
 * is loaded: the other's packages would cost a start 0.6-0.9 s on a busy 2-core machine
 * for nothing (bench/RESULTS.md, "issue 42 item 4").
 */
async function serviceAdapter(env: Environment): Promise<ServiceAdapter> {
  return env.HTTP_ADAPTER === 'fastify'
    ? (await import('./fastify-door.js')).fastifyAdapter(env)
    : (await import('./express-door.js')).expressAdapter(env);
}

/**
 * Builds the service exactly as it runs: bootstrap.ts and the e2e tests both call this.
 * Nest makes the application on a server with the service's timeouts, on the adapter
 * HTTP_ADAPTER names; the front door (front-door.ts) then puts everything between a socket
 * and Nest's routes on it, in the order a request meets it. `env` is validated by the
 * caller, once: bootstrap.ts reads process.env, a test passes its own settings.
 *
 * It resolves once the database is migrated and connected, unless `beforeDatabase`:
 * bootstrap.ts listens at once, so that a replica started during a database outage answers
 * its probes (not ready) and its own 503s meanwhile (DatabaseStartup).
 */
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
