import type { LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { answerClientErrorsWithErrorBody } from './http/client-error.handler.js';
import { setupOpenApi } from './openapi/openapi.js';

const LOG_LEVELS: LogLevel[] = [
  'fatal',
  'error',
  'warn',
  'log',
  'debug',
  'verbose',
];

/** Every level up to and including `level`. */
export function logLevelsUpTo(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}

export interface CreateAppOptions {
  logLevel?: LogLevel;
}

/**
 * Builds the service exactly as it runs: main.ts and the e2e tests both call this, so what
 * cannot be a provider (the body parser switch, response headers, the OpenAPI routes) is
 * set up in one place.
 */
export async function createApp({
  logLevel = 'log',
}: CreateAppOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    // JSON bodies are read after authentication, by JsonBodyInterceptor.
    bodyParser: false,
    // Let a failed start reject, so main can print why and exit, instead of aborting.
    abortOnError: false,
    logger: logLevelsUpTo(logLevel),
  });
  app.disable('x-powered-by');
  answerClientErrorsWithErrorBody(app.getHttpServer());
  setupOpenApi(app);
  return app;
}
