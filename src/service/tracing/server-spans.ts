import { type IncomingMessage, Server, type ServerResponse } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import { routeServerSpan } from './server-span-route.js';

/** The path alone: a query string may carry anything, tokens included. */
const pathOf = (url: string | undefined) => (url ?? '/').split('?')[0];

/** The span's attributes, the HTTP semantic conventions' stable ones; worked out once sampled. */
function describeRequest(span: Span, request: IncomingMessage): void {
  const { socket } = request;
  span.setAttributes({
    [ATTR_HTTP_REQUEST_METHOD]: request.method ?? 'GET',
    [ATTR_URL_PATH]: pathOf(request.url),
    [ATTR_URL_SCHEME]: 'encrypted' in socket ? 'https' : 'http',
    [ATTR_NETWORK_PROTOCOL_VERSION]: request.httpVersion,
    ...(socket.localPort === undefined
      ? {}
      : { [ATTR_SERVER_PORT]: socket.localPort }),
    ...(socket.remoteAddress === undefined
      ? {}
      : { [ATTR_CLIENT_ADDRESS]: socket.remoteAddress }),
    ...(request.headers['user-agent'] === undefined
      ? {}
      : { [ATTR_USER_AGENT_ORIGINAL]: request.headers['user-agent'] }),
  });
}

function answered(
  span: Span,
  request: IncomingMessage,
  response: ServerResponse,
) {
  const status = response.statusCode;
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  // Express knows the route by now; Fastify's was set by the front door.
  routeServerSpan(span, request);
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The server span of every request, sampled first: an unsampled request costs a header read
 * and a decision, unlike instrumentation-http
 * (bench/RESULTS.md#2026-11-28-issue-43-what-tracing-costs-a-create). Returns the undo.
 */
export function traceIncomingRequests(tracer: Tracer): () => void {
  // Node's own emit (or whatever patched it first), called with the server as `this`.
  const emit = Reflect.get(Server.prototype, 'emit') as (
    this: Server,
    event: string | symbol,
    ...args: unknown[]
  ) => boolean;
  Server.prototype.emit = function (
    this: Server,
    event: string | symbol,
    ...args: unknown[]
  ): boolean {
    if (event !== 'request') return emit.call(this, event, ...args);
    const [request, response] = args as [IncomingMessage, ServerResponse];
    const parent =
      request.headers.traceparent === undefined
        ? ROOT_CONTEXT
        : propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(
      request.method ?? 'GET',
      { kind: SpanKind.SERVER },
      parent,
    );
    if (!span.isRecording()) return emit.call(this, event, ...args);
    describeRequest(span, request);
    const active = trace.setSpan(parent, span);
    response.once('close', () => answered(span, request, response));
    return context.with(active, () => emit.call(this, event, ...args));
  };
  return () => {
    Server.prototype.emit = emit;
  };
}
