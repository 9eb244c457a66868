/**
 * Why the insert batcher did not send a row, in its own terms: PlantsService turns each
 * into the Error answer a client gets (toApiError).
 */

/** More rows wait than the batcher lets queue up, or the oldest waited past its turn. */
export class InsertQueueFullError extends Error {
  constructor() {
    super('The insert queue is full.');
    this.name = 'InsertQueueFullError';
  }
}

/** The client left before its row was sent: it is never written. */
export class InsertClientGoneError extends Error {
  constructor() {
    super('The client left before its row was sent.');
    this.name = 'InsertClientGoneError';
  }
}
