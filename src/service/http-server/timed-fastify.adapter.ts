import type { RequestListener, Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  createServiceServer,
  listenArguments,
  refuseHttps,
  type ServerSettings,
} from './service-server.js';

/** Fastify on the service's server (no listener of its own); routes match as on Express (case, trailing slash). */
export class TimedFastifyAdapter extends FastifyAdapter {
  private readonly handler: RequestListener;

  constructor(private readonly settings: ServerSettings) {
    const server = createServiceServer(settings);
    let handler: RequestListener | undefined;
    super({
      serverFactory: (fastifyHandler: RequestListener): Server => {
        handler = fastifyHandler;
        return server;
      },
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
    refuseHttps(options);
    super.initHttpServer(options);
  }

  /** Nest's listen(port, hostname?, callback?), with the configured accept queue. */
  override listen(port: string | number, ...rest: unknown[]): Server {
    const { options, callback } = listenArguments(this.settings, port, rest);
    // FastifyAdapter.listen takes Fastify's listen options too; its types name a port only.
    super.listen(options as unknown as number, callback);
    return this.getHttpServer() as Server;
  }
}
