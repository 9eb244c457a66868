import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import {
  createServiceServer,
  listenArguments,
  type RequestClasses,
  refuseHttps,
  type ServerSettings,
} from './service-server.js';

type RequestHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  next: () => void,
) => void;

/** Given the path of a POST route Nest registers, a handler to run first on it, if any. */
export type PostRouteHook = (path: string) => RequestHandler | undefined;

/** `Base` making its objects with `prototype` (which inherits `Base.prototype`) from the start. */
function bornWith(
  Base: new (...args: never[]) => object,
  prototype: object,
): unknown {
  function Born(...args: unknown[]): object {
    return Reflect.construct(Base, args, Born) as object;
  }
  Born.prototype = prototype;
  return Born;
}

/**
 * Node's request and response classes with objects born with the app's own prototypes
 * (`app.request`, `app.response`). Express gives every request and response those prototypes
 * as it takes them; an object already born with one keeps its shape, where a changed
 * prototype changes the object's hidden class in the middle of every request.
 */
function bornForExpress(express: Express): RequestClasses {
  return {
    IncomingMessage: bornWith(
      IncomingMessage,
      express.request,
    ) as typeof IncomingMessage,
    ServerResponse: bornWith(
      ServerResponse,
      express.response,
    ) as typeof ServerResponse,
  };
}

/** Express on the service's server, its handler put last by the front door. */
export class TimedExpressAdapter extends ExpressAdapter {
  private postRouteHook: PostRouteHook = () => undefined;
  private readonly listenChecks: (() => void)[] = [];

  constructor(private readonly settings: ServerSettings) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    refuseHttps(options);
    this.setHttpServer(
      createServiceServer(
        this.settings,
        bornForExpress(this.getInstance<Express>()),
      ),
    );
  }

  /** As Fastify's onRoute hook: `hook`'s handler runs first on each POST route, before guards. */
  onPostRoute(hook: PostRouteHook): void {
    this.postRouteHook = hook;
  }

  /** `check` runs once Nest has registered its routes, before the server listens. */
  beforeListen(check: () => void): void {
    this.listenChecks.push(check);
  }

  override post(...args: unknown[]): unknown {
    const [path, ...handlers] = args;
    const first =
      typeof path === 'string' ? this.postRouteHook(path) : undefined;
    const express = this.getInstance<Express>();
    return first === undefined
      ? express.post(...(args as [string, ...RequestHandler[]]))
      : express.post(path as string, first, ...(handlers as RequestHandler[]));
  }

  /** Nest's listen(port, hostname?, callback?), with the configured accept queue. */
  override listen(port: string | number, ...rest: unknown[]): Server {
    for (const check of this.listenChecks) check();
    const { options, callback } = listenArguments(this.settings, port, rest);
    return (this.getHttpServer() as Server).listen(options, callback);
  }
}
