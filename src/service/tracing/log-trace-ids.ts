import { trace } from '@opentelemetry/api';

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
