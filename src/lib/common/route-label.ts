import type { IncomingMessage } from 'node:http';

/**
 * The route template a request matched ("/plants"), for logs and metric labels: never the
 * raw path, which would give every distinct URL a label of its own. Requests that matched
 * nothing land in Nest's catch-all not-found route, whose template has a wildcard.
 */
export function routeLabel(request: IncomingMessage): string {
  const path = (request as IncomingMessage & { route?: { path?: unknown } })
    .route?.path;
  return typeof path === 'string' && !path.includes('*') ? path : 'unmatched';
}
