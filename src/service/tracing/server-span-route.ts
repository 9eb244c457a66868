import { type Span, trace } from '@opentelemetry/api';
import { routeLabel } from '../../lib/http-request/route-label.js';

/**
 * Gives the HTTP server span its route template, as the HTTP semantic conventions ask
 * (`http.route`, and the name `POST /plants`). Fastify knows the route when its onRequest
 * hook runs (the front door's); Express by the time the answer is sent (server-spans.ts).
 * Without an SDK, or in a request not sampled, there is no span, and nothing is done.
 */
export function routeServerSpan(
  span: Span | undefined,
  request: { method?: string },
): void {
  if (span === undefined || !span.isRecording()) return;
  const route = routeLabel(request);
  if (route === 'unmatched') return;
  span.setAttribute('http.route', route);
  span.updateName(`${request.method} ${route}`);
}

/** The front door's call, for the span of the request it is handed. */
export function routeActiveServerSpan(request: { method?: string }): void {
  routeServerSpan(trace.getActiveSpan(), request);
}
