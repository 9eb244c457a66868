import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's defaults, but for upgrade-insecure-requests: an API on plain HTTP behind a TLS
 * proxy, whose Swagger UI on http://localhost that directive would break.
 */
export const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/**
 * The headers helmet's own middleware sets for SECURITY_HEADERS, by name: worked out once,
 * by that middleware, for the front door to set on every answer. None of them depends on
 * the request (no CSP nonce is configured), and the one header helmet removes,
 * X-Powered-By, is never set by Fastify and is turned off on Express (express-door.ts).
 * Why not the middleware per request: its chain of twelve middlewares was a few percent of
 * a create's CPU (bench/RESULTS.md, issue 32).
 */
export function securityHeaderValues(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string) {
      headers[name.toLowerCase()] = value;
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(SECURITY_HEADERS)(
    {} as IncomingMessage,
    recorder as unknown as ServerResponse,
    (error?: unknown) => {
      if (error !== undefined) throw error as Error;
    },
  );
  return Object.freeze(headers);
}
