import { Logger } from '@nestjs/common';

/**
 * One Ctrl+C reaches the service several times within milliseconds: from the terminal
 * (the whole foreground process group) and again from `npm` and `nest start`, which pass
 * it on. A person's second press comes later than this.
 */
const SECOND_PRESS_AFTER_MS = 1_000;

export interface StopHandlers {
  /** The first SIGTERM or SIGINT: stop in order. */
  stop(signal: NodeJS.Signals): void;
  /** A second Ctrl+C: skip what is left of the waiting, still in order. */
  hurry(): void;
}

/**
 * Listens to SIGTERM and SIGINT for the life of the process. Not `process.once`: a repeated
 * signal would then meet Node's default action and kill the process mid-drain, cutting
 * in-flight requests and leaving the embedded PostgreSQL running. A repeated SIGTERM (a
 * process manager or a person insisting) changes nothing; a SIGINT pressed again at least
 * a second after the first calls `hurry`. Returns what takes the listeners off.
 */
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
