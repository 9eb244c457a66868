import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/HTTP's JSON encoding carries it (ids in hex), with the fields read here. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  serviceName: unknown;
  /** The name of the tracer that made it (its instrumentation scope). */
  scopeName: unknown;
}

/** The SQL of a pg span, under either name instrumentation-pg gives it. */
export function statementOf(span: ReceivedSpan): string {
  const text =
    span.attributes['db.query.text'] ?? span.attributes['db.statement'];
  return typeof text === 'string' ? text : '';
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

interface TracesRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: (Omit<
        ReceivedSpan,
        'attributes' | 'serviceName' | 'scopeName'
      > & {
        attributes?: KeyValue[];
      })[];
    }[];
  }[];
}

/** An OTLP value: a string, a number (int64 may come as text), a boolean. */
const plain = (value: Record<string, unknown>): unknown =>
  value.intValue !== undefined
    ? Number(value.intValue)
    : (value.stringValue ?? value.boolValue ?? value.doubleValue);

const attributesOf = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

/**
 * A collector's OTLP/HTTP traces endpoint (POST /v1/traces, http/json), in the test: keeps
 * every span it is sent, and the raw bodies, to look for what must never be there; of any
 * other encoding (protobuf), the content type alone.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: string[] = [];
  /** The content type of every request to /v1/traces, kept or refused. */
  readonly contentTypes: (string | undefined)[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (request.url === '/v1/traces')
          receiver.contentTypes.push(request.headers['content-type']);
        const accepted =
          request.url === '/v1/traces' &&
          request.headers['content-type'] === 'application/json';
        if (accepted) receiver.keep(body);
        response.writeHead(accepted ? 200 : 415, {
          'Content-Type': 'application/json',
        });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    return receiver;
  }

  get endpoint(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }

  private keep(body: string): void {
    this.bodies.push(body);
    const request = JSON.parse(body) as TracesRequest;
    for (const { resource, scopeSpans = [] } of request.resourceSpans ?? []) {
      const serviceName = attributesOf(resource?.attributes)['service.name'];
      for (const { scope, spans = [] } of scopeSpans)
        for (const span of spans)
          this.spans.push({
            ...span,
            parentSpanId: span.parentSpanId || undefined,
            links: span.links ?? [],
            attributes: attributesOf(span.attributes),
            serviceName,
            scopeName: scope?.name,
          });
    }
  }
}
