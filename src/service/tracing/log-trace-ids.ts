import { context, trace } from '@opentelemetry/api';

/** pino's mixin: a line inside a span carries its ids, as OpenTelemetry's log model names them; a new object each time. */
export function traceIdsOfActiveSpan(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return {
    trace_id: traceId,
    span_id: spanId,
    trace_flags: traceFlags.toString(16).padStart(2, '0'),
  };
}

/** `listener`, run in the active span's context when there is one: a line it writes then carries the span's ids. */
export function inActiveSpan<A extends unknown[]>(
  listener: (...args: A) => void,
): (...args: A) => void {
  const active = context.active();
  return trace.getSpan(active) === undefined
    ? listener
    : context.bind(active, listener);
}
