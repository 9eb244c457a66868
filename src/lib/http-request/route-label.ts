/** What each adapter records of the route a request matched. */
interface RoutedRequest {
  /** Express: the matched route. */
  route?: { path?: unknown };
  /** Fastify: the matched route's options. */
  routeOptions?: { url?: unknown };
}

/** The route template a request matched ("/plants"), never the raw path, for logs and metric labels. */
export function routeLabel(request: object): string {
  const { route, routeOptions } = request as RoutedRequest;
  const path = route?.path ?? routeOptions?.url;
  return typeof path === 'string' && !path.includes('*') ? path : 'unmatched';
}
