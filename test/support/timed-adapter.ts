import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';

/** What both timed adapters (Express's and Fastify's) are to Nest. */
interface TimedAdapter {
  initHttpServer(options: NestApplicationOptions): void;
  getHttpServer(): unknown;
  listen(port: string | number, ...rest: unknown[]): Server;
}

/**
 * Makes `adapter`'s server and has it listen as Nest asks (the port as text, a host, a
 * callback), the server's own listen spied on; once called back, the server, what the
 * adapter's listen returned, and the spy.
 */
export async function listenedAsNestAsks(adapter: TimedAdapter) {
  adapter.initHttpServer({});
  const server = adapter.getHttpServer() as Server;
  const listen = vi.spyOn(server, 'listen');
  let returned: unknown;
  await new Promise<void>((resolve) => {
    returned = adapter.listen('0', '127.0.0.1', resolve);
  });
  return { server, returned, listen };
}

/** Has `adapter`'s server, made already, answer with `listener` on a free loopback port; the base URL. */
export async function servingOnLoopback(
  adapter: TimedAdapter,
  listener: RequestListener,
): Promise<string> {
  const server = adapter.getHttpServer() as Server;
  server.on('request', listener);
  await new Promise<void>((resolve) => {
    adapter.listen(0, '127.0.0.1', resolve);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
