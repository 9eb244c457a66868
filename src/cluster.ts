import cluster, { type Worker } from 'node:cluster';
import { Logger } from '@nestjs/common';
import { ConfigurationError, type Environment } from './config/environment.js';

const logger = new Logger('Cluster');

/**
 * The primary of WEB_CONCURRENCY workers: each worker is the whole service, the primary
 * only shares the port among them, replaces a worker that dies, and on SIGTERM or SIGINT
 * asks each to drain and exits 0 once all have (1 if any failed to stop cleanly).
 */
export function runClusterPrimary(env: Environment): void {
  if (env.DATABASE_URL === undefined) {
    throw new ConfigurationError(
      'Invalid configuration: WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded ' +
        'database and its development token belong to one process.',
    );
  }
  let stopping = false;
  let failures = 0;
  const fork = (): Worker => cluster.fork();

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failures += 1;
      if (Object.keys(cluster.workers ?? {}).length === 0)
        process.exit(failures === 0 ? 0 : 1);
      return;
    }
    logger.error(
      `Worker ${worker.process.pid} died (${signal ?? `exit code ${code}`}); starting another`,
    );
    fork();
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.log(
      `${signal} received: stopping ${Object.keys(cluster.workers ?? {}).length} workers`,
    );
    for (const worker of Object.values(cluster.workers ?? {}))
      worker?.kill('SIGTERM');
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  logger.log(`Starting ${env.WEB_CONCURRENCY} workers`);
  for (let index = 0; index < env.WEB_CONCURRENCY; index += 1) fork();
}
