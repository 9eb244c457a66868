import cluster from 'node:cluster';
import { Logger } from '@nestjs/common';
import { ConfiguredTokens } from './auth/configured-tokens.js';
import { createApp } from './app.setup.js';
import { runClusterPrimary } from './cluster.js';
import {
  ConfigurationError,
  type Environment,
  validateEnvironment,
} from './config/environment.js';
import { GracefulShutdown } from './lifecycle/graceful-shutdown.js';

const logger = new Logger('PlantStore');

/**
 * The development token exists so that `npm start` works on a fresh clone; it is shown
 * on the terminal, and never goes through the logger.
 */
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

async function bootstrap(env: Environment): Promise<void> {
  const app = await createApp(env);

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.log(
      `${signal} received: draining requests, then closing the database`,
    );
    app
      .get(GracefulShutdown)
      .drain(env.SHUTDOWN_TIMEOUT_MS)
      .then(() => app.close())
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
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  await app.listen(env.PORT, env.HOST);
  logger.log(
    `Plant Store listening on ${await app.getUrl()} (Node.js ${process.version})`,
  );
  const { developmentToken } = app.get(ConfiguredTokens);
  if (developmentToken !== undefined)
    printDevelopmentToken(developmentToken, env);
}

function start(): Promise<void> {
  // The one validation of the process's settings; everything else is handed the result.
  const env = validateEnvironment(process.env);
  if (cluster.isPrimary && env.WEB_CONCURRENCY > 1) {
    runClusterPrimary(env);
    return Promise.resolve();
  }
  return bootstrap(env);
}

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
