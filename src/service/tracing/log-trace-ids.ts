import { trace } from '@opentelemetry/api';

/**
 * pino's mixin while an SDK runs: each line written inside a span carries its ids, under
 * the names OpenTelemetry's log data model gives them. A new object each time: pino
 * merges the line into it.
 */
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
