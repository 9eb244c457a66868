import { Logger } from '@nestjs/common';

/**
 * STOP_WHEN_STDIN_CLOSES: the parent's death, even by SIGKILL, closes the pipe and the
 * service stops as on SIGTERM. A pipe survives the V8 flags' execve.
 */
export function stopWhenStdinCloses(): void {
  const logger = new Logger('Lifecycle');
  const stop = (): void => {
    logger.warn(
      'Standard input closed (the process that started the service is gone): stopping as on SIGTERM',
    );
    process.kill(process.pid, 'SIGTERM');
  };
  process.stdin.once('end', stop);
  process.stdin.once('error', stop);
  // Reads and drops whatever the parent writes: only the end matters.
  process.stdin.resume();
}
