import cluster, { type Worker } from 'node:cluster';
import { Logger } from '@nestjs/common';
import { ConfigurationError, type Environment } from './config/environment.js';
import { handleStopSignals } from './lifecycle/stop-signals.js';

const logger = new Logger('Cluster');

/**
 * The primary of WEB_CONCURRENCY workers: each worker is the whole service, the primary
 * only shares the port among them, replaces a worker that dies, and on SIGTERM or SIGINT
 * asks each to drain (delay included) and exits 0 once all have (1 if any failed to stop
 * cleanly). A repeated signal never kills the primary: its workers would go with it.
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
      // process.kill, not worker.kill: the latter disconnects first, which makes the
      // worker close its listener at once, before its delay and drain.
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
