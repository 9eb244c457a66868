/** A request's failure: `code` says what (TIMEOUT, CLOSED, ECONNRESET...). */
export interface RequestError extends Error {
  code: string;
}

export interface PoolResponse {
  status: number;
  body: string;
}

/** Parses one response from the start of `buffer`; undefined while it is incomplete. */
export function parseResponse(
  buffer: Buffer,
): { status: number; body: string; used: number; close: boolean } | undefined;

/** Keep-alive connections to one server, one request at a time on each. */
export class ConnectionPool {
  constructor(options: {
    host: string;
    port: number;
    maxConnections?: number;
    /** Counted from each request's `since`; past it the request fails with TIMEOUT. */
    timeoutMs?: number;
  });
  request(
    bytes: Buffer,
    done: (error: RequestError | undefined, response?: PoolResponse) => void,
    since?: number,
  ): void;
  close(): void;
}
