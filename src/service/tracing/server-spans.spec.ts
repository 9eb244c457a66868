import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  ParentBasedSampler,
  type ReadableSpan,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { eventually } from '../../../test/support/poll.js';
import { traceIncomingRequests } from './server-spans.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

/**
 * A plain Node server under traceIncomingRequests, its spans kept in memory; the sampler
 * samples no root (ratio 0), so only a sampled traceparent is traced.
 */
describe('traceIncomingRequests: the server span, sampled first', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  let undo: () => void;
  let server: Server;
  let url: string;
  /** What the handler saw of the active span: its trace id, or none. */
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    context.setGlobalContextManager(
      new AsyncLocalStorageContextManager().enable(),
    );
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    undo = traceIncomingRequests(provider.getTracer('test'));
    server = createServer((request, response) => {
      seen.push(trace.getActiveSpan()?.spanContext().traceId);
      // As Express leaves a request it matched to a route.
      if (request.url === '/plants/7')
        Object.assign(request, { route: { path: '/plants/:id' } });
      const status =
        request.headers.authorization === 'Bearer right' ? 200 : 401;
      const failed = { '/broken': 503, '/failed': 500 }[request.url ?? ''];
      response.writeHead(failed ?? status);
      response.end();
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    undo();
    await new Promise((resolve) => server.close(resolve));
    propagation.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => {
    exporter.reset();
    seen.length = 0;
  });

  async function spansOf(path: string, headers: Record<string, string>) {
    const answer = await fetch(`${url}${path}`, { method: 'POST', headers });
    await answer.arrayBuffer();
    // The span ends on the response's 'close', after the client has its answer.
    const spans = await eventually('the server span', async () => {
      await provider.forceFlush();
      const finished: ReadableSpan[] = exporter.getFinishedSpans();
      return finished.length > 0 ? finished : undefined;
    });
    return spans;
  }

  it('continues a sampled traceparent, and records a 401 as its status with no token in it', async () => {
    const spans = await spansOf('/plants?token=query-secret', {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      authorization: 'Bearer wrong-secret-token',
    });
    expect(
      spans.map((span) => ({
        name: span.name,
        kind: span.kind,
        traceId: span.spanContext().traceId,
        parent: span.parentSpanContext?.spanId,
        attributes: span.attributes,
        status: span.status,
      })),
    ).toEqual([
      {
        name: 'POST',
        kind: SpanKind.SERVER,
        traceId: TRACE_ID,
        parent: PARENT_ID,
        attributes: expect.objectContaining({
          'http.request.method': 'POST',
          'url.path': '/plants',
          'url.scheme': 'http',
          'http.response.status_code': 401,
        }) as unknown,
        status: { code: SpanStatusCode.UNSET },
      },
    ]);
    expect(JSON.stringify(spans[0].attributes)).not.toMatch(/secret/);
    expect(seen).toEqual([TRACE_ID]);
  });

  it.each([
    ['/broken', '503'],
    ['/failed', '500'],
  ])('marks a 5xx an error, by its status: %s', async (path, type) => {
    const [span] = await spansOf(path, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    });
    expect({
      status: span.status,
      type: span.attributes['error.type'],
    }).toEqual({ status: { code: SpanStatusCode.ERROR }, type });
  });

  it('names the span by the route a router matched, once answered', async () => {
    const [span] = await spansOf('/plants/7', {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    });
    expect({
      name: span.name,
      route: span.attributes['http.route'],
    }).toEqual({ name: 'POST /plants/:id', route: '/plants/:id' });
  });

  it("describes the request by the HTTP conventions' stable attributes, and nothing else", async () => {
    const [span] = await spansOf('/plants?id=1', {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      'user-agent': 'plant-client/1.0',
      authorization: 'Bearer right',
    });
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'url.path': '/plants',
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'server.port': Number(new URL(url).port),
      'client.address': '127.0.0.1',
      'user_agent.original': 'plant-client/1.0',
      'http.response.status_code': 200,
    });
  });

  it('does nothing for a request not sampled: no span, and no context for its handler', async () => {
    for (const headers of [
      { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` },
      {} as Record<string, string>,
    ]) {
      const answer = await fetch(`${url}/plants`, { method: 'POST', headers });
      await answer.arrayBuffer();
    }
    // A sampled request after them: once its span is in, theirs would be too.
    const spans = await spansOf('/plants', {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    });
    expect(spans.map((span) => span.spanContext().traceId)).toEqual([TRACE_ID]);
    expect(seen).toEqual([undefined, undefined, TRACE_ID]);
  });
});

describe('traceIncomingRequests: the undo it returns', () => {
  it("gives Node's servers their own emit back", () => {
    const emit = () => Reflect.get(Server.prototype, 'emit') as unknown;
    const own = emit();
    const undo = traceIncomingRequests(trace.getTracer('test'));
    expect(emit()).not.toBe(own);
    undo();
    expect(emit()).toBe(own);
  });
});
