import type { HelmetOptions } from 'helmet';

/**
 * helmet's defaults, but for upgrade-insecure-requests: an API on plain HTTP behind a TLS
 * proxy, whose Swagger UI on http://localhost that directive would break. Applied with
 * `app.use(helmet(SECURITY_HEADERS))`: helmet's own middleware, per request. Its headers
 * worked out once and replayed by one middleware saved about 3% of a create's CPU, within
 * the noise of a fresh A/B, so the replay went (bench/RESULTS.md, issue 23 item 4).
 */
export const SECURITY_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};
