/** How one request of an open loop ended; `ms` counts from when it was due. */
export type OpenLoopOutcome =
  | { status: number; body: string; ms: number; error?: undefined }
  | { error: string; ms: number; status?: undefined };

export interface OpenLoopOptions {
  /** The server's root, http://host:port. */
  url: string;
  /** POSTed to; /plants unless given. */
  path?: string;
  /** Sent with every request (Content-Length is added). */
  headers: Record<string, string>;
  /** Requests per second. */
  rate: number;
  /** Requests in all. */
  count: number;
  /** Request `index`'s body, asked for when it is due (`dueAt`: performance.now() time). */
  next(
    index: number,
    dueAt: number,
  ): { body: string; settle(outcome: OpenLoopOutcome): void };
  /** From the due time; past it a request fails with TIMEOUT. 10 s unless given. */
  timeoutMs?: number;
  /** 256 unless given. */
  maxConnections?: number;
}

/** Resolves once every request is settled. */
export function openLoop(options: OpenLoopOptions): Promise<{
  /** When request 0 was due (performance.now() time). */
  startedAt: number;
}>;
