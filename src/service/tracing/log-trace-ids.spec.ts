import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { inActiveSpan, traceIdsOfActiveSpan } from './log-trace-ids.js';

describe("traceIdsOfActiveSpan: a log line's trace ids, as OpenTelemetry's log model names them", () => {
  beforeAll(() => {
    context.setGlobalContextManager(
      new AsyncLocalStorageContextManager().enable(),
    );
  });
  afterAll(() => context.disable());

  const inSpan = <T>(traceFlags: number, read: () => T): T =>
    context.with(
      trace.setSpan(
        context.active(),
        trace.wrapSpanContext({
          traceId: '0af7651916cd43dd8448eb211c80319c',
          spanId: 'b7ad6b7169203331',
          traceFlags,
        }),
      ),
      read,
    );

  it('gives the ids of the span a line is written in, the flags as two hex digits', () => {
    expect(inSpan(TraceFlags.SAMPLED, traceIdsOfActiveSpan)).toEqual({
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      span_id: 'b7ad6b7169203331',
      trace_flags: '01',
    });
    expect(inSpan(TraceFlags.NONE, traceIdsOfActiveSpan).trace_flags).toBe(
      '00',
    );
    expect(inSpan(0xab, traceIdsOfActiveSpan).trace_flags).toBe('ab');
  });

  it('gives nothing outside a span, and a new object each time (pino merges into it)', () => {
    expect(traceIdsOfActiveSpan()).toEqual({});
    expect(traceIdsOfActiveSpan()).not.toBe(traceIdsOfActiveSpan());
    const first = inSpan(1, traceIdsOfActiveSpan);
    expect(inSpan(1, traceIdsOfActiveSpan)).not.toBe(first);
  });

  it("runs a listener made in a span in that span's context, wherever it is called from", async () => {
    const listener = () => traceIdsOfActiveSpan().trace_id;
    const bound = inSpan(1, () => inActiveSpan(listener));
    expect(bound).not.toBe(listener);
    // As an event does: later, and from no span.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(bound()).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(listener()).toBeUndefined();
  });

  it('leaves a listener made outside a span as it is: no wrapper for a request not sampled', () => {
    const listener = () => undefined;
    expect(inActiveSpan(listener)).toBe(listener);
  });
});
