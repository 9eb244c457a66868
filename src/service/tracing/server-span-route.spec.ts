import { context, ROOT_CONTEXT, type Span, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { routeActiveServerSpan, routeServerSpan } from './server-span-route.js';

/** A span, recording or not, and what routeServerSpan did to it. */
const fakeSpan = (recording: boolean) => {
  const span = {
    isRecording: () => recording,
    setAttribute: vi.fn(),
    updateName: vi.fn(),
  };
  return {
    span: span as unknown as Span,
    done: () => ({
      attributes: span.setAttribute.mock.calls,
      names: span.updateName.mock.calls.flat(),
    }),
  };
};

/** A request Express matched to `POST /plants`. */
const plantsRequest = { method: 'POST', route: { path: '/plants' } };

describe('routeServerSpan: the server span named by the route template', () => {
  /** What routeServerSpan did to a span, recording or not, for a request as an adapter left it. */
  const routed = (recording: boolean, request: object) => {
    const { span, done } = fakeSpan(recording);
    routeServerSpan(span, request as { method: string });
    return done();
  };

  it("sets http.route and the name from the route a request matched, on either adapter's request", () => {
    expect(routed(true, plantsRequest)).toEqual({
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
    expect(routed(false, plantsRequest)).toEqual(untouched);
    expect(() => routeServerSpan(undefined, { method: 'POST' })).not.toThrow();
  });
});

describe("routeActiveServerSpan: the front door's call, in the request's context", () => {
  beforeAll(() => {
    context.setGlobalContextManager(
      new AsyncLocalStorageContextManager().enable(),
    );
  });
  afterAll(() => context.disable());

  it('routes the span of the request it runs in, and passes where there is none', () => {
    const { span, done } = fakeSpan(true);
    context.with(trace.setSpan(ROOT_CONTEXT, span), () =>
      routeActiveServerSpan(plantsRequest),
    );
    expect(done()).toEqual({
      attributes: [['http.route', '/plants']],
      names: ['POST /plants'],
    });
    expect(() => routeActiveServerSpan(plantsRequest)).not.toThrow();
  });
});
