import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { Environment } from './config/environment.js';
import { openFrontDoor } from './front-door.js';
import { TimedFastifyAdapter } from './http-server/timed-fastify.adapter.js';

/**
 * Builds the service exactly as it runs: bootstrap.ts and the e2e tests both call this.
 * Nest makes the application on a server with the service's timeouts; the front door
 * (front-door.ts) then puts everything between a socket and Nest's routes on it, in the
 * order a request meets it. `env` is validated by the caller, once: bootstrap.ts reads
 * process.env, a test passes its own settings.
 */
export async function createApp(
  env: Environment,
): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(env),
    new TimedFastifyAdapter(env),
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
  openFrontDoor(app, env);
  return app;
}
