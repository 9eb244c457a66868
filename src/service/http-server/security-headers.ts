import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** helmet's defaults without upgrade-insecure-requests, which breaks Swagger UI on plain http. */
export const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/**
 * helmet's headers, worked out once by its own middleware, for the front door to set on
 * every answer (none depends on the request), instead of its middleware chain per request
 * (bench/RESULTS.md#2026-11-26-issue-32-the-last-levers-a-convoy-broken-middie-gone-and-the-overload-margin).
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
