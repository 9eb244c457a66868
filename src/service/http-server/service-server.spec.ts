import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RawConnection } from '../../../test/support/raw-http.js';
import {
  createServiceServer,
  listenArguments,
  refuseHttps,
  type ServerSettings,
} from './service-server.js';

// Each setting a value of its own, so that one read in another's place shows.
const SETTINGS: ServerSettings = {
  HTTP_HEADERS_TIMEOUT_MS: 1_111,
  HTTP_REQUEST_TIMEOUT_MS: 2_222,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 3_333,
  HTTP_LISTEN_BACKLOG: 44,
};

describe('createServiceServer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server?.listening)
      await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  it('has the timeouts of its settings, and no listener of its own', () => {
    server = createServiceServer(SETTINGS);
    expect({
      headersTimeout: server.headersTimeout,
      requestTimeout: server.requestTimeout,
      keepAliveTimeout: server.keepAliveTimeout,
      listening: server.listening,
      requestListeners: server.listenerCount('request'),
    }).toEqual({
      headersTimeout: 1_111,
      requestTimeout: 2_222,
      keepAliveTimeout: 3_333,
      listening: false,
      requestListeners: 0,
    });
  });

  it('leaves the Host check to the front door: an HTTP/1.1 request without Host reaches the listener', async () => {
    server = createServiceServer(SETTINGS);
    server.on('request', (_request, response) => response.writeHead(204).end());
    await new Promise<void>((resolve) =>
      server!.listen(0, '127.0.0.1', resolve),
    );
    const connection = await RawConnection.open(
      (server.address() as AddressInfo).port,
    );
    try {
      expect((await connection.ask('GET / HTTP/1.1\r\n\r\n')).status).toBe(204);
    } finally {
      connection.socket.destroy();
    }
  });
});

describe('listenArguments: Nest’s listen(port, hostname?, callback?)', () => {
  const callback = (): void => undefined;

  it('takes the port as a number, the host and the callback, with the backlog of the settings', () => {
    expect(listenArguments(SETTINGS, '8080', ['127.0.0.1', callback])).toEqual({
      options: { port: 8080, host: '127.0.0.1', backlog: 44 },
      callback,
    });
  });

  it('takes a callback without a host, and neither', () => {
    const withCallback = listenArguments(SETTINGS, 0, [callback]);
    expect(withCallback).toEqual({
      options: { port: 0, host: undefined, backlog: 44 },
      callback,
    });
    expect(withCallback.callback).toBe(callback);
    expect(listenArguments(SETTINGS, 3000, [])).toEqual({
      options: { port: 3000, host: undefined, backlog: 44 },
      callback: undefined,
    });
  });

  it('ignores what is neither a host nor a callback', () => {
    expect(listenArguments(SETTINGS, 1, [undefined, 7, '::1'])).toEqual({
      options: { port: 1, host: '::1', backlog: 44 },
      callback: undefined,
    });
  });
});

describe('refuseHttps', () => {
  it('stops a start that asks for HTTPS, and lets any other through', () => {
    expect(() => refuseHttps({ httpsOptions: {} })).toThrow(
      new Error('HTTPS is terminated in front of this service, not by it.'),
    );
    expect(refuseHttps({})).toBeUndefined();
    expect(refuseHttps({ httpsOptions: undefined })).toBeUndefined();
  });
});
