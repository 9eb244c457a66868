import type { Server } from 'node:http';
import type { ServerSettings } from '../../src/service/http-server/service-server.js';

/** Settings whose timeouts no default shares, for the timed adapters' specs. */
export const SETTINGS: ServerSettings = {
  HTTP_HEADERS_TIMEOUT_MS: 1_111,
  HTTP_REQUEST_TIMEOUT_MS: 2_222,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 3_333,
  HTTP_LISTEN_BACKLOG: 44,
};

/** A server's timeouts and its own request listeners. */
export const timeoutsOf = (server: Server) => ({
  headersTimeout: server.headersTimeout,
  requestTimeout: server.requestTimeout,
  keepAliveTimeout: server.keepAliveTimeout,
  requestListeners: server.listenerCount('request'),
});

/** What timeoutsOf reads from a server made with SETTINGS and no listener of its own. */
export const SETTINGS_TIMEOUTS = {
  headersTimeout: 1_111,
  requestTimeout: 2_222,
  keepAliveTimeout: 3_333,
  requestListeners: 0,
};
