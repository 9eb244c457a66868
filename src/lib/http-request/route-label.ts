/** What each adapter records of the route a request matched. */
interface RoutedRequest {
  /** Express: the matched route. */
  route?: { path?: unknown };
  /** Fastify: the matched route's options. */
  routeOptions?: { url?: unknown };
}

/**
 * The route template a request matched ("/plants"), for logs and metric labels: never the
 * raw path, which would give every distinct URL a label of its own. Requests that matched
 * nothing land in Nest's catch-all not-found route, whose template has a wildcard (Express),
 * or in Fastify's not-found handler, which has none.
 */
export function routeLabel(request: object): string {
  const { route, routeOptions } = request as RoutedRequest;
  const path = route?.path ?? routeOptions?.url;
  return typeof path === 'string' && !path.includes('*') ? path : 'unmatched';
}
