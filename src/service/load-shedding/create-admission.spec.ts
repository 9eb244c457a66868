import { EventEmitter } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { PassThrough } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { DataSource } from 'typeorm';
import {
  isWholeResponse,
  parseResponse,
  RawConnection,
} from '../../../test/support/raw-http.js';
import type { Environment } from '../config/environment.js';
import { eventually } from '../../../test/support/poll.js';
import { MetricsService, type PlantsService } from '../../lib/index.js';
import { earlyAnswerRule } from '../http-server/early-answer.js';
import { CreateAdmission, routePathOf } from './create-admission.js';
import { EventLoopDelay } from './event-loop-delay.js';

const BODY = '{"id":1,"name":"Fern"}';
const OVERLOADED = JSON.stringify({
  error: 503,
  message: 'The service is overloaded; retry later.',
});

const create = (headers: string, body = BODY): string =>
  `POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;
const withLength = (body = BODY): string =>
  create(`Content-Length: ${Buffer.byteLength(body)}\r\n`, body);

/** Whether `text` holds `count` whole responses, one after the other. */
function holdsResponses(text: string, count: number): boolean {
  let rest = text;
  for (let index = 0; index < count; index += 1) {
    if (!isWholeResponse(rest)) return false;
    const head = rest.indexOf('\r\n\r\n');
    const length = Number(/content-length: *(\d+)/i.exec(rest)?.[1]);
    rest = rest.slice(head + 4 + length);
  }
  return true;
}

describe('CreateAdmission', () => {
  let server: Server;
  let port: number;
  let overloaded: boolean;
  let env: Environment;
  /** While true, the stand-in for Express keeps what it is handed instead of answering. */
  let holding: boolean;
  /** What the stand-in for Express was handed and keeps, in the order handed on. */
  let held: { body: string; response: ServerResponse }[];
  let admission: CreateAdmission;
  let metrics: MetricsService;
  let loop: EventLoopDelay;
  const waitingNow = async (): Promise<number | undefined> =>
    (await metrics.registry.getSingleMetric('plant_creates_waiting')?.get())
      ?.values[0]?.value;
  const shedBy = async (reason: string): Promise<number | undefined> =>
    (await metrics.createsShed.get()).values.find(
      ({ labels }) => labels.reason === reason,
    )?.value;

  beforeEach(async () => {
    overloaded = true;
    holding = false;
    held = [];
    // The plant route: the admission met twice, as a create admitted at the front door
    // meets it again at the route (it admits once), then the rest of the route, stood in
    // for by a handler that answers whatever is admitted with 200.
    // Behind the front door's early-answer rule, as on the service's server (an answer sent
    // before a small body arrived keeps the connection; any other closes it).
    const earlyAnswer = earlyAnswerRule(1024);
    server = createServer((request, response) => {
      earlyAnswer(request, response);
      admission.atRoute(request, response, () =>
        admission.atRoute(request, response, () => {
          let body = '';
          request.setEncoding('utf8');
          request.on('data', (chunk: string) => (body += chunk));
          request.on('end', () =>
            holding ? held.push({ body, response }) : response.end('admitted'),
          );
        }),
      );
    });
    // As the service's server does (front-door.ts): no automatic 100 Continue.
    server.on('checkContinue', (request, response) =>
      server.emit('request', request, response),
    );
    const plants = {
      get isOverloaded() {
        return overloaded;
      },
    } as PlantsService;
    metrics = new MetricsService({ driver: {} } as DataSource);
    env = {
      BODY_LIMIT: '1kb',
      CREATE_CONCURRENCY_LIMIT: 100,
      CREATE_WAITING_LIMIT: 100,
      CREATE_WAITING_TIMEOUT_MS: 1000,
      CREATE_EVENT_LOOP_DELAY_LIMIT_MS: 100,
    } as Environment;
    loop = new EventLoopDelay();
    admission = new CreateAdmission(plants, env, metrics, loop);
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', resolve),
    );
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    loop.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a create with 503 and Retry-After, and keeps the connection for the next request when the body is small', async () => {
    const connection = await RawConnection.open(port);
    connection.write(withLength());
    connection.write(withLength());
    const text = await connection.until((received) =>
      holdsResponses(received, 2),
    );
    const first = parseResponse(text.slice(0, text.indexOf('}') + 1));
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('2');
    expect(first.headers.connection).toBe('keep-alive');
    expect(first.body).toBe(OVERLOADED);

    // The same connection still carries requests: a create once the load is gone.
    overloaded = false;
    connection.write(withLength());
    const again = await connection.until((received) =>
      holdsResponses(received, 3),
    );
    expect(again.endsWith('admitted')).toBe(true);
    expect(connection.socket.destroyed).toBe(false);
    connection.socket.destroy();
    // Counted by the bound they met; the admitted create is not.
    expect(await shedBy('queue')).toBe(2);
    expect(await shedBy('concurrency')).toBe(0);
  });

  it.each([
    ['declares a body over BODY_LIMIT', 'Content-Length: 2048\r\n', BODY],
    [
      'is chunked (no size known)',
      'Transfer-Encoding: chunked\r\n',
      `${BODY.length.toString(16)}\r\n${BODY}\r\n`,
    ],
    [
      'waits for 100 Continue',
      `Expect: 100-continue\r\nContent-Length: ${BODY.length}\r\n`,
      '',
    ],
  ])(
    'refuses a create whose body it would not read (one that %s) and closes the connection',
    async (_case, headers, body) => {
      const connection = await RawConnection.open(port);
      connection.write(create(headers, body));
      const answer = parseResponse(await connection.closed);
      expect(answer.status).toBe(503);
      expect(answer.headers.connection).toBe('close');
      expect(answer.body).toBe(OVERLOADED);
    },
  );

  /**
   * One work slot and one waiting place, both taken: the first create handed on and held,
   * the second waiting its turn. Returns their connections.
   */
  async function takeTheSlotAndTheLine(): Promise<
    [RawConnection, RawConnection]
  > {
    Object.assign(env, {
      CREATE_CONCURRENCY_LIMIT: 1,
      CREATE_WAITING_LIMIT: 1,
    });
    overloaded = false;
    holding = true;
    const [first, second] = await Promise.all(
      [1, 2].map(() => RawConnection.open(port)),
    );
    first.write(withLength('{"id":1,"name":"First"}'));
    await eventually('the first create handed on', () =>
      held.length === 1 ? true : undefined,
    );
    second.write(withLength('{"id":2,"name":"Second"}'));
    await eventually('the second create waiting', async () =>
      (await waitingNow()) === 1 ? true : undefined,
    );
    return [first, second];
  }

  it('works on CREATE_CONCURRENCY_LIMIT creates at once, holds CREATE_WAITING_LIMIT more in arrival order before any work, and refuses past both', async () => {
    const [first, second] = await takeTheSlotAndTheLine();
    // One worked on and one waiting: the next is refused at once.
    const third = await RawConnection.open(port);
    third.write(withLength());
    const refused = parseResponse(
      await third.until((text) => holdsResponses(text, 1)),
    );
    expect(refused.status).toBe(503);
    expect(await shedBy('concurrency')).toBe(1);
    // The waiting create was never handed on while the first was being worked on.
    expect(held).toHaveLength(1);

    held[0].response.end('first');
    await first.until((text) => text.endsWith('first'));
    await eventually('the waiting create handed on', () =>
      held.length === 2 ? true : undefined,
    );
    expect(await waitingNow()).toBe(0);
    held[1].response.end('second');
    await second.until((text) => text.endsWith('second'));
    for (const connection of [first, second, third])
      connection.socket.destroy();
  });

  it('hands waiting creates on in arrival order, and skips one whose client left while it waited', async () => {
    Object.assign(env, {
      CREATE_CONCURRENCY_LIMIT: 1,
      CREATE_WAITING_LIMIT: 3,
    });
    overloaded = false;
    holding = true;
    const names = ['First', 'Second', 'Third', 'Fourth'];
    const connections = await Promise.all(
      names.map(() => RawConnection.open(port)),
    );
    for (const [index, name] of names.entries()) {
      connections[index].write(withLength(`{"id":${index},"name":"${name}"}`));
      await eventually(`${name} handed on or waiting`, async () =>
        held.length + ((await waitingNow()) ?? 0) === index + 1
          ? true
          : undefined,
      );
    }
    // The second leaves while it waits; the server sees its connection go.
    connections[1].socket.destroy();
    await eventually('the second connection closed', async () =>
      (await new Promise<number>((resolve, reject) =>
        server.getConnections((error, count) =>
          error ? reject(error) : resolve(count),
        ),
      )) === 3
        ? true
        : undefined,
    );

    for (const expected of ['Third', 'Fourth']) {
      held.at(-1)?.response.end('done');
      await eventually(`${expected} handed on`, () =>
        held.at(-1)?.body.includes(expected) ? true : undefined,
      );
    }
    expect(held.map(({ body }) => JSON.parse(body).name)).toEqual([
      'First',
      'Third',
      'Fourth',
    ]);
    held.at(-1)?.response.end('done');
    for (const connection of connections) connection.socket.destroy();
  });

  it('refuses a create that waited CREATE_WAITING_TIMEOUT_MS for its turn, and never hands it on', async () => {
    const [first, second] = await takeTheSlotAndTheLine();
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + env.CREATE_WAITING_TIMEOUT_MS);
      held[0].response.end('first');
      const refused = parseResponse(
        await second.until((text) => holdsResponses(text, 1)),
      );
      expect(refused.status).toBe(503);
    } finally {
      vi.useRealTimers();
    }
    expect(held).toHaveLength(1);
    expect(await shedBy('queue')).toBe(1);
    for (const connection of [first, second]) connection.socket.destroy();
  });

  it('never refuses other methods on the route (they are answered 405 after it)', async () => {
    const connection = await RawConnection.open(port);
    connection.write('GET /plants HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await connection.until((received) =>
      holdsResponses(received, 1),
    );
    expect(parseResponse(text).status).toBe(200);
    connection.socket.destroy();
    expect(await shedBy('queue')).toBe(0);
  });
});

describe('CreateAdmission, in front of Express and at its bounds', () => {
  /** A request as Node hands it on: a body stream with a method, a URL and headers. */
  const requestTo = (
    url: string,
    { method = 'POST', headers = {} as Record<string, string> } = {},
  ) =>
    Object.assign(new PassThrough(), {
      method,
      url,
      headers,
      socket: { destroyed: false },
    }) as unknown as IncomingMessage;

  /** What is written to the client: the status and headers of a refusal. */
  const responseOf = () => {
    const answer = Object.assign(new EventEmitter(), {
      status: undefined as number | undefined,
      headers: {} as Record<string, unknown>,
      writeHead(status: number, headers: Record<string, unknown>) {
        answer.status = status;
        answer.headers = headers;
        return answer;
      },
      end() {
        return answer;
      },
    });
    return answer;
  };

  let overloaded = false;
  /** The event loop's delay as the admission reads it, and the refusals that kept it watched. */
  const loop = { delayMs: 0, ticks: 0, watch: vi.fn() };
  let metrics: MetricsService;
  const admissionWith = (env: Partial<Environment> = {}) =>
    new CreateAdmission(
      {
        get isOverloaded() {
          return overloaded;
        },
      } as PlantsService,
      {
        BODY_LIMIT: '1kb',
        CREATE_CONCURRENCY_LIMIT: 100,
        CREATE_WAITING_LIMIT: 100,
        CREATE_WAITING_TIMEOUT_MS: 1000,
        CREATE_EVENT_LOOP_DELAY_LIMIT_MS: 100,
        ...env,
      } as Environment,
      (metrics = new MetricsService({ driver: {} } as DataSource)),
      loop as unknown as EventLoopDelay,
    );

  afterEach(() => {
    overloaded = false;
    loop.delayMs = 0;
    loop.ticks = 0;
    loop.watch.mockClear();
    vi.useRealTimers();
  });

  /** Whether the listener in front of Express refused the request (503) or passed it on. */
  const inFront = (admission: CreateAdmission, request: IncomingMessage) => {
    const passed = vi.fn();
    const response = responseOf();
    admission.inFrontOf(passed)(request, response as unknown as ServerResponse);
    return passed.mock.calls.length === 1 ? 'passed on' : response.status;
  };

  it('sheds in front of Express the paths the route learned, however they are spelled, and nothing else', () => {
    const admission = admissionWith();
    admission.atRoute(
      requestTo('/Plants/?from=route'),
      responseOf() as never,
      () => {},
    );
    overloaded = true;
    const outcomes = Object.fromEntries(
      [
        '/plants',
        '/PLANTS',
        '/plants/',
        '/plants?x=1',
        '/plants/1',
        '/',
        '/plantsx',
      ].map((url) => [url, inFront(admission, requestTo(url))]),
    );
    expect(outcomes).toEqual({
      '/plants': 503,
      '/PLANTS': 503,
      '/plants/': 503,
      '/plants?x=1': 503,
      '/plants/1': 'passed on',
      '/': 'passed on',
      '/plantsx': 'passed on',
    });
    expect(inFront(admission, requestTo('/plants', { method: 'GET' }))).toBe(
      'passed on',
    );
  });

  it('hands an admitted create at a learned path on to Express', () => {
    const admission = admissionWith();
    admission.atRoute(requestTo('/plants'), responseOf() as never, () => {});
    expect(inFront(admission, requestTo('/plants'))).toBe('passed on');
  });

  it('learns at most 16 paths, whatever clients send', () => {
    const admission = admissionWith();
    for (let index = 0; index <= 16; index += 1)
      admission.atRoute(
        requestTo(`/p${index}`),
        responseOf() as never,
        () => {},
      );
    overloaded = true;
    expect(inFront(admission, requestTo('/p15'))).toBe(503);
    expect(inFront(admission, requestTo('/p16'))).toBe('passed on');
  });

  it('refuses every create while the event loop runs later than CREATE_EVENT_LOOP_DELAY_LIMIT_MS after a bound was met in the late turn, until a tick is on time; never when late without one, nor with the limit at 0', async () => {
    const admission = admissionWith();
    const handedOn = vi.fn();
    const admit = (on = admission) => {
      const response = responseOf();
      on.atRoute(requestTo('/plants'), response as never, handedOn);
      return response.status ?? 'handed on';
    };
    const shed = async () =>
      Object.fromEntries(
        (await metrics.createsShed.get()).values.map(({ labels, value }) => [
          labels.reason,
          value,
        ]),
      );
    // Late, but no bound met: a busy machine, not overload.
    loop.ticks = 5;
    loop.delayMs = 101;
    expect(admit()).toBe('handed on');
    expect(loop.watch).not.toHaveBeenCalled();

    // A bound met in the turn the last tick measured (tick 5), and late: every create refused.
    overloaded = true;
    expect(admit()).toBe(503);
    overloaded = false;
    loop.ticks = 6;
    expect(admit()).toBe(503);
    // Still late, ticks on: still refused, and each refusal keeps the delay watched.
    loop.ticks = 9;
    expect(admit()).toBe(503);
    expect(loop.watch).toHaveBeenCalledTimes(3);
    // A tick on time ends it.
    loop.delayMs = 100;
    expect(admit()).toBe('handed on');
    // Late again with no bound met since tick 5: created.
    loop.delayMs = 101;
    expect(admit()).toBe('handed on');
    expect(handedOn).toHaveBeenCalledTimes(3);
    expect(await shed()).toEqual({ concurrency: 0, queue: 1, event_loop: 2 });

    // The limit at 0: never, however late.
    const off = admissionWith({ CREATE_EVENT_LOOP_DELAY_LIMIT_MS: 0 });
    overloaded = true;
    expect(admit(off)).toBe(503);
    overloaded = false;
    loop.delayMs = 60_000;
    expect(admit(off)).toBe('handed on');
  });

  it('refuses a create that has waited exactly CREATE_WAITING_TIMEOUT_MS when its turn comes', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const admission = admissionWith({ CREATE_CONCURRENCY_LIMIT: 1 });
    const first = responseOf();
    const second = responseOf();
    const handedOn = vi.fn();
    admission.atRoute(requestTo('/plants'), first as never, handedOn);
    admission.atRoute(requestTo('/plants'), second as never, handedOn);
    expect(handedOn).toHaveBeenCalledTimes(1);
    vi.setSystemTime(1_001_000);
    first.emit('close');
    expect(second.status).toBe(503);
    expect(handedOn).toHaveBeenCalledTimes(1);
  });
});

describe('routePathOf: a path as the routing matches it', () => {
  it.each([
    ['/plants', '/plants'],
    ['/plants?id=1&tag=x', '/plants'],
    ['/PLANTS/', '/plants'],
    ['/Plants/?x', '/plants'],
    ['/', '/'],
    ['', ''],
  ])('%j is %j', (url, path) => {
    expect(routePathOf({ url } as IncomingMessage)).toBe(path);
  });

  it('reads a request without a url as the empty path', () => {
    expect(routePathOf({} as IncomingMessage)).toBe('');
  });
});
