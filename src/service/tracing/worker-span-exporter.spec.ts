import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanStatusCode } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { exportWorkerInThisThread } from '../../../test/support/export-worker-in-thread.js';
import {
  otlpHttpSender,
  type SerializedSpanExporter,
} from './answer-span-exports.js';
import {
  type ExportWorker,
  type SerializedSpans,
  WorkerSpanExporter,
} from './worker-span-exporter.js';

/** Three finished spans, one with a link and an error, from an SDK of the spec's own. */
async function finishedSpans(): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer('the spec');
  const first = tracer.startSpan('plants.create', {
    attributes: { 'plants.id': 7 },
  });
  const batch = tracer.startSpan('plants.insert_batch', {
    links: [{ context: first.spanContext(), attributes: { row: 1 } }],
  });
  batch.setStatus({ code: SpanStatusCode.ERROR, message: '503' });
  for (const span of [first, batch, tracer.startSpan('POST')]) span.end();
  await provider.forceFlush();
  return memory.getFinishedSpans();
}

/** What the worker's sender was asked, answering exports with `result`; its shutdown fails with `stopFailure`. */
function recordingSender(
  result: ExportResult = { code: 0 },
  stopFailure?: Error,
) {
  const sent: SerializedSpans[] = [];
  const calls: string[] = [];
  const sender: SerializedSpanExporter = {
    export: (spans, done) => {
      sent.push(spans);
      done(result);
    },
    forceFlush: () => {
      calls.push('flush');
      return Promise.resolve();
    },
    shutdown: () => {
      calls.push('shutdown');
      return stopFailure === undefined
        ? Promise.resolve()
        : Promise.reject(stopFailure);
    },
  };
  return { sender, sent, calls };
}

const exported = (exporter: WorkerSpanExporter, spans: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));

describe('WorkerSpanExporter: batches serialized here, sent by a worker', () => {
  it.each([
    ['http/protobuf', ProtobufTraceSerializer],
    ['http/json', JsonTraceSerializer],
  ] as const)(
    'hands the worker the %s body OpenTelemetry would send, and its span count',
    async (protocol, serializer) => {
      const spans = await finishedSpans();
      const { sender, sent } = recordingSender();
      const exporter = new WorkerSpanExporter(protocol, () =>
        exportWorkerInThisThread(sender),
      );

      expect(await exported(exporter, spans)).toEqual({
        code: ExportResultCode.SUCCESS,
      });
      expect(sent).toHaveLength(1);
      expect(sent[0].spanCount).toBe(3);
      expect(Buffer.from(sent[0].body)).toEqual(
        Buffer.from(serializer.serializeRequest(spans) ?? []),
      );
      await exporter.shutdown();
    },
  );

  it('copies a body that is a view on a larger buffer before handing it over (a pooled Buffer cannot be transferred)', async () => {
    const pooled = Buffer.from('a small body');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.byteLength);
    vi.spyOn(ProtobufTraceSerializer, 'serializeRequest').mockReturnValue(
      pooled,
    );
    const { sender, sent } = recordingSender();
    const exporter = new WorkerSpanExporter('http/protobuf', () =>
      exportWorkerInThisThread(sender),
    );
    try {
      expect(await exported(exporter, await finishedSpans())).toEqual({
        code: ExportResultCode.SUCCESS,
      });
      expect(Buffer.from(sent[0].body).toString()).toBe('a small body');
    } finally {
      vi.restoreAllMocks();
      await exporter.shutdown();
    }
  });

  it("answers each export with the sender's result, and passes flush and shutdown on", async () => {
    const spans = await finishedSpans();
    const failure = new Error('413 from the collector');
    const { sender, calls } = recordingSender(
      { code: ExportResultCode.FAILED, error: failure },
      new Error('collector gone'),
    );
    const exporter = new WorkerSpanExporter('http/protobuf', () =>
      exportWorkerInThisThread(sender),
    );

    const result = await exported(exporter, spans);
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toBe('413 from the collector');
    await exporter.forceFlush();
    await expect(exporter.shutdown()).rejects.toThrow('collector gone');
    expect(calls).toEqual(['flush', 'shutdown']);
    // Shut down: nothing left to flush or stop.
    await exporter.forceFlush();
    await exporter.shutdown();
    expect(calls).toEqual(['flush', 'shutdown']);
  });
});

/** A worker that never answers: its events, refs and messages are the spec's to drive and read. */
class SilentWorker extends EventEmitter {
  readonly requests: unknown[] = [];
  referenced = true;
  terminated = false;
  postMessage(request: unknown) {
    this.requests.push(request);
  }
  ref() {
    this.referenced = true;
  }
  unref() {
    this.referenced = false;
  }
  terminate() {
    this.terminated = true;
    return Promise.resolve();
  }
}

describe('WorkerSpanExporter: the worker it depends on', () => {
  it('starts the worker at once, and holds the process only while an export waits for its answer', async () => {
    const workers: SilentWorker[] = [];
    const exporter = new WorkerSpanExporter('http/protobuf', () => {
      workers.push(new SilentWorker());
      return workers.at(-1) as unknown as ExportWorker;
    });
    expect(workers).toHaveLength(1);
    expect(workers[0].referenced).toBe(false);

    const results: ExportResult[] = [];
    exporter.export(await finishedSpans(), (result) => results.push(result));
    expect(workers[0].referenced).toBe(true);
    const [{ id }] = workers[0].requests as { id: number }[];
    workers[0].emit('message', { id, result: { code: 0 } });
    expect(results).toEqual([{ code: ExportResultCode.SUCCESS }]);
    expect(workers[0].referenced).toBe(false);
  });

  it('fails what a lost worker left unanswered, and starts another for the next export', async () => {
    const workers: SilentWorker[] = [];
    const exporter = new WorkerSpanExporter('http/json', () => {
      workers.push(new SilentWorker());
      return workers.at(-1) as unknown as ExportWorker;
    });
    const spans = await finishedSpans();
    const results: ExportResult[] = [];
    exporter.export(spans, (result) => results.push(result));
    exporter.export(spans, (result) => results.push(result));

    workers[0].emit('exit', 1);
    expect(results.map(({ code }) => code)).toEqual([
      ExportResultCode.FAILED,
      ExportResultCode.FAILED,
    ]);
    expect(results[0].error?.message).toBe(
      'the span export worker exited with code 1',
    );

    exporter.export(spans, (result) => results.push(result));
    expect(workers).toHaveLength(2);
    expect(workers[1].requests).toHaveLength(1);
    workers[1].emit('error', new Error('out of memory'));
    expect(results[2].error?.message).toBe('out of memory');
  });
});

describe('otlpHttpSender: what the worker sends with', () => {
  let received: { url?: string; headers: IncomingHttpHeaders; body: Buffer }[];
  let status: number;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        url: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks),
      });
      response.writeHead(status).end();
    });
  });
  let endpoint: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    received = [];
    status = 200;
  });

  const sent = (
    sender: SerializedSpanExporter,
    body: Uint8Array,
  ): Promise<ExportResult> =>
    new Promise((resolve) => sender.export({ body, spanCount: 1 }, resolve));

  it.each([
    ['http/protobuf', 'application/x-protobuf'],
    ['http/json', 'application/json'],
  ] as const)(
    'posts the body as it is, %s as %s, to the endpoint',
    async (protocol, contentType) => {
      const sender = otlpHttpSender({ protocol, endpoint });
      const body = new TextEncoder().encode('{"resourceSpans":[]}');

      expect((await sent(sender, body)).code).toBe(ExportResultCode.SUCCESS);
      expect(received).toHaveLength(1);
      expect(received[0].url).toBe('/v1/traces');
      expect(received[0].headers['content-type']).toBe(contentType);
      expect(received[0].body).toEqual(Buffer.from(body));
      await sender.shutdown();
    },
  );

  it('fails an export the collector refuses', async () => {
    status = 400;
    const sender = otlpHttpSender({ protocol: 'http/json', endpoint });
    const result = await sent(sender, new Uint8Array([1]));
    expect(result.code).toBe(ExportResultCode.FAILED);
    await sender.shutdown();
  });
});
