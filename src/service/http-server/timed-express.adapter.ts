import type { Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import {
  createServiceServer,
  listenArguments,
  refuseHttps,
  type ServerSettings,
} from './service-server.js';

/**
 * Express on the service's server (service-server.ts). Nest creates the server in
 * initHttpServer, with Express as its request listener; here it has none: the front door
 * (front-door.ts) puts Express's handler last, behind the service's own steps.
 */
export class TimedExpressAdapter extends ExpressAdapter {
  constructor(private readonly settings: ServerSettings) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    refuseHttps(options);
    this.setHttpServer(createServiceServer(this.settings));
  }

  /** Nest's listen(port, hostname?, callback?), with the configured accept queue. */
  override listen(port: string | number, callback?: () => void): Server;
  override listen(
    port: string | number,
    hostname: string,
    callback?: () => void,
  ): Server;
  override listen(port: string | number, ...rest: unknown[]): Server {
    const { options, callback } = listenArguments(this.settings, port, rest);
    return (this.getHttpServer() as Server).listen(options, callback);
  }
}
