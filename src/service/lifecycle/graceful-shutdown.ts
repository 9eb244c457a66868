import type { Server, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InFlightResponses } from './in-flight-responses.js';
import { ShutdownState } from './shutdown-state.js';

const IDLE_SWEEP_MS = 100;

export interface DrainTimes {
  /** How long the replica keeps accepting and serving after readiness turned 503. */
  delayMs: number;
  /** How long in-flight requests may run once the listener is closed. */
  timeoutMs: number;
}

/**
 * Stops the HTTP side as a balancer expects: readiness fails, serving goes on for the delay,
 * the listener and idle connections close, in-flight requests finish within the timeout.
 */
@Injectable()
export class GracefulShutdown {
  private readonly logger = new Logger('Shutdown');
  private readonly inFlight = new InFlightResponses();
  private readonly hurried = new AbortController();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly state: ShutdownState,
  ) {}

  /** Every request, first: in flight until its response closes; `Connection: close` once draining. */
  track(response: ServerResponse): void {
    this.inFlight.add(response);
    if (this.state.isShuttingDown) response.setHeader('Connection', 'close');
  }

  /** Resolves once every connection is closed, or the timeout forced them closed. */
  async drain({ delayMs, timeoutMs }: DrainTimes): Promise<void> {
    this.state.begin();
    // Requests already running say so too, so their clients do not reuse the connection.
    for (const response of this.inFlight) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
    }
    if (delayMs > 0) {
      this.logger.log(
        `Readiness is 503; still serving for ${delayMs} ms so that load balancers stop sending`,
      );
      await this.pause(delayMs);
    }
    const server = this.server();
    const closed = server.listening ? once(server, 'close') : Promise.resolve();
    server.close();
    // A connection that finishes its last request becomes idle: sweep until all are gone.
    const sweeper = setInterval(
      () => server.closeIdleConnections(),
      IDLE_SWEEP_MS,
    );
    server.closeIdleConnections();
    try {
      const outcome = await Promise.race([
        closed.then(() => 'drained' as const),
        this.pause(timeoutMs),
      ]);
      if (outcome === 'elapsed') {
        this.logger.warn(
          `${this.inFlight.size} request(s) still running after ${timeoutMs} ms: closing their connections`,
        );
      } else if (outcome === 'hurried') {
        this.logger.warn(
          `Told to hurry: closing the connections of ${this.inFlight.size} running request(s)`,
        );
      }
      if (outcome !== 'drained') server.closeAllConnections();
    } finally {
      clearInterval(sweeper);
    }
  }

  /** Cuts what is left of the delay and of the drain (a person's second Ctrl+C). */
  hurry(): void {
    this.hurried.abort();
  }

  private pause(ms: number): Promise<'elapsed' | 'hurried'> {
    return sleep(ms, 'elapsed' as const, {
      signal: this.hurried.signal,
    }).catch(() => 'hurried' as const);
  }

  private server(): Server {
    return this.adapterHost.httpAdapter.getHttpServer() as Server;
  }
}
