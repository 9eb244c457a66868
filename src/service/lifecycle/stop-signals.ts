import { Logger } from '@nestjs/common';

/** One Ctrl+C arrives several times (terminal, npm, nest start); a second press comes later. */
const SECOND_PRESS_AFTER_MS = 1_000;

export interface StopHandlers {
  /** The first SIGTERM or SIGINT: stop in order. */
  stop(signal: NodeJS.Signals): void;
  /** A second Ctrl+C: skip what is left of the waiting, still in order. */
  hurry(): void;
}

/** SIGTERM and SIGINT for the process's life (`once` would let a repeat kill it mid-drain). */
export function handleStopSignals(handlers: StopHandlers): () => void {
  const logger = new Logger('Signals');
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      handlers.stop(signal);
    } else if (
      signal === 'SIGINT' &&
      Date.now() - firstAt >= SECOND_PRESS_AFTER_MS
    ) {
      logger.warn(
        'SIGINT received again: skipping the rest of the drain, then closing the database',
      );
      handlers.hurry();
    } else {
      logger.log(`${signal} received again: already stopping, carrying on`);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
