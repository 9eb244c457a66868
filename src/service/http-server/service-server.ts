import { createServer, type Server, type ServerOptions } from 'node:http';
import type { ListenOptions } from 'node:net';
import type { Environment } from '../config/environment.js';

/** The settings of the HTTP server itself, the same whichever adapter serves on it. */
export type ServerSettings = Pick<
  Environment,
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
  | 'HTTP_LISTEN_BACKLOG'
>;

/** The classes Node makes each request's objects with, when an adapter wants its own. */
export type RequestClasses = Pick<
  ServerOptions,
  'IncomingMessage' | 'ServerResponse'
>;

/** The service's HTTP server with its timeouts and no listener: the front door adds them. */
export function createServiceServer(
  settings: ServerSettings,
  classes: RequestClasses = {},
): Server {
  const server = createServer({
    ...classes,
    requireHostHeader: false,
    headersTimeout: settings.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: settings.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: settings.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
  });
  // Older Node versions ignore keepAliveTimeout in the options; the property always works.
  server.keepAliveTimeout = settings.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/** Nest's listen(port, hostname?, callback?) as Node's listen options, with the backlog. */
export function listenArguments(
  settings: ServerSettings,
  port: string | number,
  rest: unknown[],
): { options: ListenOptions; callback?: () => void } {
  const callback = rest.find(
    (item): item is () => void => typeof item === 'function',
  );
  const host = rest.find((item): item is string => typeof item === 'string');
  return {
    options: {
      port: Number(port),
      host,
      backlog: settings.HTTP_LISTEN_BACKLOG,
    },
    callback,
  };
}

/** HTTPS is terminated in front of the service: a start asking for it stops. */
export function refuseHttps(options: { httpsOptions?: unknown }): void {
  if (options.httpsOptions !== undefined)
    throw new Error('HTTPS is terminated in front of this service, not by it.');
}
