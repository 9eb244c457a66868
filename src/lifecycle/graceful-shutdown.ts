import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ShutdownState } from './shutdown-state.js';

const IDLE_SWEEP_MS = 100;

/**
 * Stops the HTTP side in the order a load balancer expects: readiness fails at once, the
 * listener closes (no new connections), idle keep-alive connections close, in-flight
 * requests finish (each answered with `Connection: close`) within the timeout, and only
 * then does the caller close the pool and the database.
 */
@Injectable()
export class GracefulShutdown implements OnApplicationBootstrap {
  private readonly logger = new Logger('Shutdown');
  private readonly inFlight = new Set<ServerResponse>();

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly state: ShutdownState,
  ) {}

  onApplicationBootstrap(): void {
    // Prepended, so it runs before Express sees the request.
    this.server().prependListener(
      'request',
      (_request: IncomingMessage, response: ServerResponse) => {
        this.inFlight.add(response);
        response.once('close', () => this.inFlight.delete(response));
        if (this.state.isShuttingDown)
          response.setHeader('Connection', 'close');
      },
    );
  }

  /** Resolves once every connection is closed, or the timeout forced them closed. */
  async drain(timeoutMs: number): Promise<void> {
    this.state.begin();
    // Requests already running say so too, so their clients do not reuse the connection.
    for (const response of this.inFlight) {
      if (!response.headersSent) response.setHeader('Connection', 'close');
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
        closed.then(() => 'drained'),
        sleep(timeoutMs, 'timeout'),
      ]);
      if (outcome === 'timeout') {
        this.logger.warn(
          `${this.inFlight.size} request(s) still running after ${timeoutMs} ms: closing their connections`,
        );
        server.closeAllConnections();
      }
    } finally {
      clearInterval(sweeper);
    }
  }

  private server(): Server {
    return this.adapterHost.httpAdapter.getHttpServer() as Server;
  }
}
