import {
  context,
  type SpanContext,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  failureOf,
  fern,
  lost,
  plantsInMemory,
  refused,
} from '../../../test/support/plants-in-memory.js';
import type { NewPlant } from './dto/new-plant.dto.js';
import { CreateTracing } from './create-tracing.js';
import { PlantInsertBatcher, type PlantRow } from './plant-insert.batcher.js';
import type { PlantsService } from './plants.service.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({
  spanProcessors: [new SimpleSpanProcessor({ exporter })],
});
const requests = trace.getTracer('the host');

/** A create as a host's HTTP span would hold it: inside a span of its own. */
function inRequest<T>(work: () => Promise<T>): Promise<T> {
  return requests.startActiveSpan('request', (span) =>
    work().finally(() => span.end()),
  );
}

let finished: ReadableSpan[] = [];
/** The spans exported so far: SimpleSpanProcessor hands each on asynchronously. */
async function flushed(): Promise<void> {
  await provider.forceFlush();
  finished = exporter.getFinishedSpans();
}
/** The service, each create inside a request's recorded span. */
const traced = (service: PlantsService) => ({
  create: (plant: NewPlant) => inRequest(() => service.create(plant)),
});
const named = (name: string) => finished.filter((span) => span.name === name);

/** A plants.insert_batch span's attributes: its rows, and what became of them. */
const batchCounts = (counts: {
  size: number;
  inserted: number;
  replayed: number;
  conflicts: number;
}) => ({
  'plants.batch.size': counts.size,
  'plants.batch.inserted': counts.inserted,
  'plants.batch.replayed': counts.replayed,
  'plants.batch.conflicts': counts.conflicts,
});
const idOf = ({ traceId, spanId }: SpanContext) => `${traceId}/${spanId}`;
const linksOf = (span: ReadableSpan) =>
  span.links.map((link) => idOf(link.context)).sort();
/** What a span tells an exporter, as text. */
const exported = (spans: ReadableSpan[]) =>
  JSON.stringify(
    spans.map(({ name, attributes, status, events, links }) => ({
      name,
      attributes,
      status,
      events,
      links: links.map((link) => link.attributes),
    })),
  );
const parentOf = (span: ReadableSpan) =>
  span.parentSpanContext === undefined
    ? undefined
    : idOf(span.parentSpanContext);

describe('the package without an OpenTelemetry SDK', () => {
  it('makes no span and nothing for one: the API is a no-op', async () => {
    expect(CreateTracing.start()).toBeUndefined();
    const { service } = await plantsInMemory();
    await expect(service.create(fern(1n))).resolves.toEqual({ name: 'Fern' });
    await flushed();
    expect(finished).toEqual([]);
  });
});

describe('the spans of PlantsService and the insert batcher, with an SDK', () => {
  beforeAll(() => {
    context.setGlobalContextManager(
      new AsyncLocalStorageContextManager().enable(),
    );
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  it('makes no span for a create outside a recorded span: it joins traces, never starts one', async () => {
    const { service } = await plantsInMemory();
    await service.create(fern(1n));
    const unsampled = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 0,
    });
    await context.with(trace.setSpan(context.active(), unsampled), () =>
      service.create(fern(2n)),
    );
    await flushed();
    expect(finished).toEqual([]);
  });

  it("sends an untraced create's statement in no request's context, though a traced create's statement set it going", async () => {
    // What each statement finds active: pg's instrumentation would make its span a child of
    // it, and so record every later statement in an old request's trace (issue 43's 1%).
    const activeAt: Record<string, string | undefined> = {};
    const held: (() => void)[] = [];
    const batcher = new PlantInsertBatcher(
      async (rows: PlantRow[]) => {
        activeAt[rows.map(({ id }) => id).join()] = trace
          .getActiveSpan()
          ?.spanContext().spanId;
        await new Promise<void>((resolve) => held.push(resolve));
        return new Set(rows.map(({ id }) => id));
      },
      { maxRows: 100, maxWaitMs: 60_000 },
    );
    const insert = (id: number) =>
      batcher.insert({
        row: { id: String(id), name: 'Fern', tag: null },
        deadline: Date.now() + 60_000,
        tracing: CreateTracing.start(),
      });
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    // A recorded request's create, then three untraced ones, a statement each: every slot busy.
    let requestSpan: string | undefined;
    const traced = inRequest(() => {
      requestSpan = trace.getActiveSpan()?.spanContext().spanId;
      return insert(1);
    });
    const untraced = [];
    for (const id of [2, 3, 4]) {
      await nextTurn();
      untraced.push(insert(id));
    }
    await nextTurn();
    // Queued behind them, and sent once the traced create's statement answers.
    untraced.push(insert(5));
    await nextTurn();
    held.shift()!();
    await traced;
    while (!('5' in activeAt)) await nextTurn();
    for (const release of held.splice(0)) release();
    await Promise.all(untraced);

    await flushed();
    const [batch] = named('plants.insert_batch');
    expect(requestSpan).toBeDefined();
    expect(activeAt).toEqual({
      '1': batch.spanContext().spanId,
      '2': undefined,
      '3': undefined,
      '4': undefined,
      '5': undefined,
    });
  });

  it('makes one plants.insert_batch span for the creates of one statement, each linked both ways', async () => {
    const { service } = await plantsInMemory();
    await Promise.all(
      [3n, 1n, 2n].map((id) => inRequest(() => service.create(fern(id)))),
    );

    await flushed();
    const creates = named('plants.create');
    const [batch] = named('plants.insert_batch');
    expect(creates).toHaveLength(3);
    expect(named('plants.insert_batch')).toHaveLength(1);
    expect(batch.attributes).toEqual(
      batchCounts({ size: 3, inserted: 3, replayed: 0, conflicts: 0 }),
    );
    expect(batch.status.code).toBe(SpanStatusCode.UNSET);
    // A root of its own: in none of the requests' traces, linked to all of them.
    expect(parentOf(batch)).toBeUndefined();
    expect(linksOf(batch)).toEqual(
      creates.map((create) => idOf(create.spanContext())).sort(),
    );
    const requestSpans = named('request');
    for (const create of creates) {
      expect(linksOf(create)).toEqual([idOf(batch.spanContext())]);
      expect(create.attributes).toEqual({ 'plants.create.outcome': 'created' });
      expect(create.status.code).toBe(SpanStatusCode.UNSET);
      expect(requestSpans.map((span) => idOf(span.spanContext()))).toContain(
        parentOf(create),
      );
      expect(create.spanContext().traceId).not.toBe(
        batch.spanContext().traceId,
      );
    }
  });

  it('counts a replay and a conflict on the batch that found their ids taken, and records the 409 by its Error answer', async () => {
    const { service } = await plantsInMemory();
    await traced(service).create(fern(7n, 'green'));
    exporter.reset();

    const [replay, conflict, fresh] = await Promise.allSettled([
      traced(service).create(fern(7n, 'green')),
      traced(service).create(fern(7n, 'blue')),
      traced(service).create(fern(8n)),
    ]);
    expect([replay.status, conflict.status, fresh.status]).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);

    await flushed();
    const [batch] = named('plants.insert_batch');
    expect(named('plants.insert_batch')).toHaveLength(1);
    expect(batch.attributes).toEqual(
      batchCounts({ size: 3, inserted: 1, replayed: 1, conflicts: 1 }),
    );
    const outcomes = named('plants.create').map((span) => ({
      attributes: span.attributes,
      status: span.status,
      events: span.events,
    }));
    expect(outcomes).toEqual(
      expect.arrayContaining([
        {
          attributes: { 'plants.create.outcome': 'replayed' },
          status: { code: SpanStatusCode.UNSET },
          events: [],
        },
        {
          attributes: { 'plants.create.outcome': 'created' },
          status: { code: SpanStatusCode.UNSET },
          events: [],
        },
        {
          attributes: {
            'plants.create.outcome': 'conflict',
            'error.type': '409',
          },
          status: {
            code: SpanStatusCode.ERROR,
            message:
              'A plant with this id already exists with a different name or tag.',
          },
          events: [],
        },
      ]),
    );
    expect(outcomes).toHaveLength(3);
  });

  it('hands on the batch of a create whose read was retried, owed no verdict, and counts the replay on the next', async () => {
    const { table, service } = await plantsInMemory();
    await traced(service).create(fern(5n));
    exporter.reset();
    // The INSERT finds the id taken; the SELECT then loses its connection, and the create
    // starts over: a second statement, which decides.
    table.failures = [undefined as unknown as Error, lost()];
    await expect(traced(service).create(fern(5n))).resolves.toEqual({
      name: 'Fern',
    });
    await flushed();

    const batches = named('plants.insert_batch');
    expect(batches.map((batch) => batch.attributes)).toEqual([
      batchCounts({ size: 1, inserted: 0, replayed: 0, conflicts: 0 }),
      batchCounts({ size: 1, inserted: 0, replayed: 1, conflicts: 0 }),
    ]);
    const [create] = named('plants.create');
    expect(linksOf(create)).toEqual(
      batches.map((batch) => idOf(batch.spanContext())).sort(),
    );
  });

  it('records a dead database as the 503 it is answered, without the driver error', async () => {
    const { table, service, writeCircuit } = await plantsInMemory();
    table.refusing = true;
    table.failures = [refused()];
    await failureOf(traced(service).create(fern(1n)));
    // The write circuit now refuses at once: a create with no statement, so no batch.
    await failureOf(traced(service).create(fern(2n)));
    writeCircuit.beforeApplicationShutdown();

    const unavailable = {
      code: SpanStatusCode.ERROR,
      message: 'The database is unavailable; retry later.',
    };
    await flushed();
    const [batch] = named('plants.insert_batch');
    expect(named('plants.insert_batch')).toHaveLength(1);
    expect({ attributes: batch.attributes, status: batch.status }).toEqual({
      attributes: { 'plants.batch.size': 1, 'error.type': '503' },
      status: unavailable,
    });
    const creates = named('plants.create');
    expect(
      creates.map((span) => ({
        attributes: span.attributes,
        status: span.status,
        events: span.events,
        links: span.links.length,
      })),
    ).toEqual([
      {
        attributes: { 'plants.create.outcome': 'failed', 'error.type': '503' },
        status: unavailable,
        events: [],
        links: 1,
      },
      {
        attributes: { 'plants.create.outcome': 'failed', 'error.type': '503' },
        status: unavailable,
        events: [],
        links: 0,
      },
    ]);
    expect(exported(finished)).not.toContain('ECONNREFUSED');
  });

  it('puts no part of a body in a span', async () => {
    const { service } = await plantsInMemory();
    const secretive = {
      id: 4242424242n,
      name: 'Name-9d1f',
      tag: 'Tag-77ac',
    } as NewPlant;
    await traced(service).create(secretive);
    await failureOf(
      traced(service).create({
        id: secretive.id,
        name: secretive.name,
        tag: 'Other-31b0',
      } as NewPlant),
    );
    await flushed();
    const everything = exported(finished);
    for (const part of ['4242424242', 'Name-9d1f', 'Tag-77ac', 'Other-31b0'])
      expect(everything).not.toContain(part);
  });
});
