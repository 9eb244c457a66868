/** Thrown by ConcurrencyLimit.run when `maxWaiting` tasks are already waiting. */
export class ConcurrencyLimitFullError extends Error {
  override readonly name = 'ConcurrencyLimitFullError';
}

/**
 * Runs at most `limit` tasks at a time; the others wait their turn, first come first
 * served, and at most `maxWaiting` of them: past that a task is refused at once
 * (ConcurrencyLimitFullError). What waits is a request that would otherwise hold (or wait
 * for) a database connection, so a flood queues here instead of in the pool every client
 * shares, and the queue itself cannot grow without bound.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.maxWaiting)
        throw new ConcurrencyLimitFullError(
          `${this.waiting.length} tasks are already waiting`,
        );
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `running` never overshoots.
      const next = this.waiting.shift();
      if (next === undefined) this.running -= 1;
      else next();
    }
  }

  get inFlight(): number {
    return this.running;
  }
}
