// Why the batcher did not send a row; PlantsService turns each into an Error answer (toApiError).

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
