import { createServer, type RequestListener, type Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { Environment } from '../config/environment.js';
import { answerClientError } from './client-error.handler.js';

export type ServerSettings = Pick<
  Environment,
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'HTTP_LISTEN_BACKLOG'
>;

/**
 * Fastify, on an HTTP server whose timeouts are set on purpose:
 * - headersTimeout: a client that trickles its headers (slow loris) is cut off;
 * - requestTimeout: the whole request must arrive in time;
 * - keepAliveTimeout: longer than the 60 s idle timeout of common load balancers, so the
 *   balancer, not this server, closes idle connections (no reset on a reused socket).
 * Node checks these every connectionsCheckingInterval (30 s by default): a second here
 * makes the bounds hold to the second, and only the constructor takes that interval, hence
 * Fastify's serverFactory. Given a server, Fastify sets none of its own timeouts on it and
 * adds no request listener: it hands over its request handler, which the front door
 * (front-door.ts) puts behind the service's own checks, with every other listener, once the
 * application's providers exist. The Host and Expect checks Node would answer without a
 * body are among them (requireHostHeader: false).
 *
 * Routing as Express does it by default, which the service's clients have met since its
 * start: paths match whatever their case, and with or without a trailing slash.
 */
export class TimedFastifyAdapter extends FastifyAdapter {
  private readonly handler: RequestListener;

  constructor(private readonly timeouts: ServerSettings) {
    const server = createServer({
      requireHostHeader: false,
      headersTimeout: timeouts.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: timeouts.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: timeouts.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    });
    // Older Node versions ignore keepAliveTimeout in the options; the property always works.
    server.keepAliveTimeout = timeouts.HTTP_KEEP_ALIVE_TIMEOUT_MS;
    let handler: RequestListener | undefined;
    super({
      serverFactory: (fastifyHandler: RequestListener): Server => {
        handler = fastifyHandler;
        return server;
      },
      // Fastify puts this on the server's 'clientError' itself (it always adds one): the
      // service's answer, with an Error body, instead of Fastify's.
      clientErrorHandler: answerClientError,
      routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    });
    if (handler === undefined)
      throw new Error('Fastify did not ask for the HTTP server.');
    this.handler = handler;
  }

  /** Fastify's handler of a request: the front door's last step. */
  get requestListener(): RequestListener {
    return this.handler;
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions !== undefined) {
      throw new Error(
        'HTTPS is terminated in front of this service, not by it.',
      );
    }
    super.initHttpServer(options);
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
    // FastifyAdapter.listen takes Fastify's listen options too; its types name a port only.
    const options = {
      port: Number(port),
      host,
      backlog: this.timeouts.HTTP_LISTEN_BACKLOG,
    } as unknown as number;
    super.listen(options, callback);
    return this.getHttpServer() as Server;
  }
}
