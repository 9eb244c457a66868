import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** helmet's defaults without upgrade-insecure-requests, which breaks Swagger UI on plain http. */
export const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};

/** helmet's headers, worked out once by its own middleware (docs/performance.md#small-costs-paid-per-request). */
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
