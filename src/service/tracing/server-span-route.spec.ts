import type { Span } from '@opentelemetry/api';
import { routeServerSpan } from './server-span-route.js';

describe('routeServerSpan: the server span named by the route template', () => {
  /** What routeServerSpan did to a span, recording or not, for a request as an adapter left it. */
  const routed = (recording: boolean, request: object) => {
    const span = {
      isRecording: () => recording,
      setAttribute: vi.fn(),
      updateName: vi.fn(),
    };
    routeServerSpan(span as unknown as Span, request as { method: string });
    return {
      attributes: span.setAttribute.mock.calls,
      names: span.updateName.mock.calls.flat(),
    };
  };

  it("sets http.route and the name from the route a request matched, on either adapter's request", () => {
    expect(
      routed(true, { method: 'POST', route: { path: '/plants' } }),
    ).toEqual({
      attributes: [['http.route', '/plants']],
      names: ['POST /plants'],
    });
    expect(
      routed(true, { method: 'GET', routeOptions: { url: '/health/ready' } }),
    ).toEqual({
      attributes: [['http.route', '/health/ready']],
      names: ['GET /health/ready'],
    });
  });

  it('leaves the span as it is for an unmatched request, a span not recording, or none', () => {
    const untouched = { attributes: [], names: [] };
    expect(routed(true, { method: 'GET', route: { path: '*' } })).toEqual(
      untouched,
    );
    expect(routed(true, { method: 'GET' })).toEqual(untouched);
    expect(
      routed(false, { method: 'POST', route: { path: '/plants' } }),
    ).toEqual(untouched);
    expect(() => routeServerSpan(undefined, { method: 'POST' })).not.toThrow();
  });
});
