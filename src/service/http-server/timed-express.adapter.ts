import { createServer, type Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Environment } from '../config/environment.js';

export type ServerSettings = Pick<
  Environment,
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'HTTP_LISTEN_BACKLOG'
>;

/**
 * Express, on an HTTP server whose timeouts are set on purpose:
 * - headersTimeout: a client that trickles its headers (slow loris) is cut off;
 * - requestTimeout: the whole request must arrive in time;
 * - keepAliveTimeout: longer than the 60 s idle timeout of common load balancers, so the
 *   balancer, not this server, closes idle connections (no reset on a reused socket).
 * Node checks these every connectionsCheckingInterval (30 s by default): a second here
 * makes the bounds hold to the second. Nest creates the server in initHttpServer, and
 * only the constructor takes that interval, hence this override. The server is made with
 * no listener of ours: the front door (front-door.ts) puts every one on it, in order, once
 * the application's providers exist; the Host and Expect checks Node would answer without
 * a body are among them (requireHostHeader: false).
 */
export class TimedExpressAdapter extends ExpressAdapter {
  constructor(private readonly timeouts: ServerSettings) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions !== undefined) {
      throw new Error(
        'HTTPS is terminated in front of this service, not by it.',
      );
    }
    const server = createServer({
      requireHostHeader: false,
      headersTimeout: this.timeouts.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: this.timeouts.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: this.timeouts.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    });
    // Older Node versions ignore keepAliveTimeout in the options; the property always works.
    server.keepAliveTimeout = this.timeouts.HTTP_KEEP_ALIVE_TIMEOUT_MS;
    this.setHttpServer(server);
  }

  /** Nest's listen(port, hostname?, callback?), with the configured accept queue. */
  override listen(port: string | number, callback?: () => void): Server;
  override listen(
    port: string | number,
    hostname: string,
    callback?: () => void,
  ): Server;
  override listen(port: string | number, ...rest: unknown[]): Server {
    const callback = rest.find(
      (item): item is () => void => typeof item === 'function',
    );
    const host = rest.find((item): item is string => typeof item === 'string');
    return (this.getHttpServer() as Server).listen(
      { port: Number(port), host, backlog: this.timeouts.HTTP_LISTEN_BACKLOG },
      callback,
    );
  }
}
