import cluster from 'node:cluster';
import { Logger } from '@nestjs/common';
import { createApp } from './app.setup.js';
import { runClusterPrimary } from './cluster.js';
import {
  ConfigurationError,
  deprecatedSettingsIn,
  Environment,
  validateEnvironment,
} from './config/environment.js';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { DatabaseStartup } from './database/database-startup.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { stopWhenStdinCloses } from './lifecycle/stdin-close.js';
import { handleStopSignals } from './lifecycle/stop-signals.js';
import { createLogger } from './logging/logging.module.js';
import { ServiceApiTokens } from './config/service-api-tokens.js';
import { stopTracing } from './tracing/start-tracing.js';

const logger = new Logger('PlantStore');

/** The development token, so `npm start` works on a fresh clone; on the terminal, never logged. */
function printDevelopmentToken(token: string, env: Environment): void {
  const host =
    env.HOST === '0.0.0.0' || env.HOST === '::' ? 'localhost' : env.HOST;
  process.stdout.write(
    [
      '',
      `Development token (kept in ${env.DATA_DIR}/dev-token): ${token}`,
      'Try it:',
      `  curl -s -X POST http://${host}:${env.PORT}/plants \\`,
      `    -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json' \\`,
      `    -d '{"id": 1, "name": "Monstera", "tag": "tropical"}'`,
      '',
      '',
    ].join('\n'),
  );
}

/** Drains HTTP, then closes the pool and the database (embedded PostgreSQL last), then exits. */
function shutDown(
  app: INestApplication,
  env: Environment,
  signal: NodeJS.Signals,
): void {
  logger.log(
    `${signal} received: draining requests, then closing the database`,
  );
  app
    .get(GracefulShutdown)
    .drain({
      delayMs: env.SHUTDOWN_DELAY_MS,
      timeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    })
    .then(() => app.close())
    .then(() => stopTracing())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(
          'Shutdown failed',
          error instanceof Error ? error.stack : error,
        );
        process.exit(1);
      },
    );
}

/** A start the database refused (not merely absent): said, closed, exit 1. */
function failedToStart(app: INestApplication, error: unknown): void {
  logger.error(
    'The service failed to start',
    error instanceof Error ? error.stack : error,
  );
  void app.close().then(
    () => process.exit(1),
    () => process.exit(1),
  );
}

/** The address as bound: 0.0.0.0 stays so (Nest's getUrl() says 127.0.0.1, unreachable from a port mapping). */
function listeningOn(app: INestApplication): string {
  const { address, port } = app.getHttpServer().address() as AddressInfo;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

async function bootstrap(env: Environment): Promise<void> {
  // Listening from the start: a signal during the embedded database's start must still stop it.
  let stopSignal: NodeJS.Signals | undefined;
  let running: INestApplication | undefined;
  handleStopSignals({
    stop: (signal) => {
      stopSignal = signal;
      if (running !== undefined) shutDown(running, env, signal);
    },
    hurry: () => running?.get(GracefulShutdown).hurry(),
  });

  // Listening before the database answers: not ready until it does (DatabaseStartup).
  const app = await createApp(env, { beforeDatabase: true });
  void app
    .get(DatabaseStartup)
    .started.catch((error: unknown) => failedToStart(app, error));
  if (stopSignal === undefined) {
    await app.listen(env.PORT, env.HOST);
    logger.log(
      `Plant Store listening on ${listeningOn(app)} (Node.js ${process.version}, on ${env.HTTP_ADAPTER})`,
    );
  }
  running = app;
  if (stopSignal !== undefined) {
    shutDown(app, env, stopSignal);
    return;
  }
  const { developmentToken } = app.get(ServiceApiTokens);
  if (developmentToken === undefined) return;
  // Once creates can work: the curl it prints is meant to be run at once.
  await app.get(DatabaseStartup).started.catch(() => undefined);
  if (app.get(DatabaseStartup).isStarted)
    printDevelopmentToken(developmentToken, env);
}

/** The one validation of the process's settings; installs the logger first. */
function validatedEnvironment(): Environment {
  let env: Environment;
  try {
    env = validateEnvironment(process.env);
  } catch (error) {
    // LOG_FORMAT and LOG_LEVEL may be among the refused settings: the defaults log it.
    Logger.overrideLogger(createLogger(new Environment()));
    throw error;
  }
  Logger.overrideLogger(createLogger(env));
  // Once per start: workers of WEB_CONCURRENCY read the same environment.
  if (cluster.isPrimary)
    for (const warning of deprecatedSettingsIn(process.env))
      logger.warn(warning);
  return env;
}

// async: a refused setting rejects and is logged, not thrown with a stack trace.
async function start(): Promise<void> {
  const env = validatedEnvironment();
  // The primary watches, and its stop path stops any workers.
  if (env.STOP_WHEN_STDIN_CLOSES && cluster.isPrimary) stopWhenStdinCloses();
  if (cluster.isPrimary && env.WEB_CONCURRENCY > 1) {
    runClusterPrimary(env);
    return;
  }
  await bootstrap(env);
}

/** Starts the cluster primary or the service, or logs why it cannot and exits 1. */
export function startService(): void {
  start().catch((error: unknown) => {
    if (error instanceof ConfigurationError) {
      logger.error(error.message);
    } else {
      logger.error(
        'The service failed to start',
        error instanceof Error ? error.stack : error,
      );
    }
    process.exit(1);
  });
}
