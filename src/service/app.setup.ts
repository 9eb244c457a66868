import type { RequestListener, Server } from 'node:http';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import type { Environment } from './config/environment.js';
import { answerClientErrorsWithErrorBody } from './http-server/client-error.handler.js';
import { TimedExpressAdapter } from './http-server/http-server.adapter.js';
import { SECURITY_HEADERS } from './http-server/security-headers.js';
import { RequestLogMiddleware } from './logging/request-log.middleware.js';
import { HttpMetricsMiddleware } from './metrics/http-metrics.middleware.js';
import { setupOpenApi } from './openapi/openapi.js';
import { CreateAdmission } from './load-shedding/create-admission.js';

function enableCors(
  app: NestExpressApplication,
  origins: readonly string[],
): void {
  if (origins.length === 0) return;
  app.enableCors({
    origin: origins.includes('*') ? '*' : [...origins],
    methods: ['POST'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
  });
}

/** Load shedding's refusals before Express's routing: CreateAdmission.inFrontOf. */
function shedCreatesInFrontOfExpress(app: NestExpressApplication): void {
  const server = app.getHttpServer() as Server;
  const listeners = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on(
    'request',
    app.get(CreateAdmission).inFrontOf((request, response) => {
      for (const listener of listeners) listener(request, response);
    }),
  );
}

/**
 * The request log and the request timing, for every request, as plain Express middleware
 * (Nest's documented `app.use()` for global middleware) after the OpenAPI routes. Through
 * a MiddlewareConsumer, Nest mounts each on a `{*path}` pattern that Express matches and
 * trims per request, behind a per-request WeakSet that spares a middleware mounted on
 * overlapping paths a second run: for two middleware that see every request anyway, that
 * was 3% of a create's CPU (bench/RESULTS.md, issue 19 item 7).
 */
function logAndTimeEveryRequest(app: NestExpressApplication): void {
  for (const middleware of [
    app.get(RequestLogMiddleware),
    app.get(HttpMetricsMiddleware),
  ])
    app.use(middleware.use.bind(middleware));
}

/**
 * Builds the service exactly as it runs: bootstrap.ts and the e2e tests both call this, so
 * what cannot be a provider (the HTTP server and its timeouts, the body parser switch,
 * response headers, the OpenAPI routes, the middleware every request passes) is set up in
 * one place. `env` is validated by the caller, once: bootstrap.ts reads process.env, a
 * test passes its own settings.
 */
export async function createApp(
  env: Environment,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(env),
    new TimedExpressAdapter(env),
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
  app.disable('x-powered-by');
  // Every answer is a fresh POST result: hashing it for an ETag is work nobody uses.
  app.set('etag', false);
  app.use(helmet(SECURITY_HEADERS));
  enableCors(app, env.CORS_ORIGINS);
  answerClientErrorsWithErrorBody(app.getHttpServer());
  shedCreatesInFrontOfExpress(app);
  setupOpenApi(app);
  logAndTimeEveryRequest(app);
  return app;
}
