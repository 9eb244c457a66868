import cluster, { type Worker } from 'node:cluster';
import { Logger } from '@nestjs/common';
import { ConfigurationError, type Environment } from './config/environment.js';
import { handleStopSignals } from './lifecycle/stop-signals.js';

const logger = new Logger('Cluster');

/**
 * The primary of WEB_CONCURRENCY workers: shares the port, replaces dead workers, and on a
 * signal has each drain, exiting 0 (1 if any failed). A repeated signal never kills it.
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
  const workers = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined,
    );
  handleStopSignals({
    stop: (signal) => {
      stopping = true;
      logger.log(`${signal} received: stopping ${workers().length} workers`);
      // Not worker.kill: it disconnects first, closing the listener before the drain.
      for (const worker of workers()) worker.process.kill('SIGTERM');
    },
    // Each worker hurries on its own second SIGINT; its first was the SIGTERM above.
    hurry: () => {
      for (const worker of workers()) worker.process.kill('SIGINT');
    },
  });

  logger.log(`Starting ${env.WEB_CONCURRENCY} workers`);
  for (let index = 0; index < env.WEB_CONCURRENCY; index += 1) fork();
}
