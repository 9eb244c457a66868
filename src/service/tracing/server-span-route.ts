import { type Span, trace } from '@opentelemetry/api';
import { routeLabel } from '../../lib/http-request/route-label.js';

/** The server span's `http.route` and name (`POST /plants`), when there is a span. */
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
