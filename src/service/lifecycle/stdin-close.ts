import { Logger } from '@nestjs/common';

/**
 * STOP_WHEN_STDIN_CLOSES: the process that started the service holds the other end of its
 * standard input, a pipe. When that process dies, even by SIGKILL (a test runner killed),
 * the kernel closes the pipe and the read ends: the service then stops as on SIGTERM,
 * through the one stop path (drain, then the embedded PostgreSQL), instead of running on
 * with nobody to stop it. A pipe survives the V8 flags' execve, as an IPC channel may not.
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
