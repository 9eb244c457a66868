import { Injectable, Module, ValidationPipe } from '@nestjs/common';
import type { Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { json } from 'express';
import {
  type AuthenticatedClient,
  AuthModule,
  PlantsModule,
  TokenVerifier,
} from '../src/lib/index.js';
import { errorBody, expectErrorAnswer, send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { HOST_ADAPTERS, type Host, startHost } from './support/host-app.js';
import { storedPlant } from './support/stored-plants.js';
import { TOKEN } from './support/tokens.js';

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
/** The service's words for an id outside int64, or not an integer. */
const ID_RULE =
  'id must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or an exponent.';

let safeCounter = 0;
/** An id JSON.parse keeps exact (below 2^53), unique across runs. */
function safeId(): bigint {
  safeCounter += 1;
  return BigInt(Date.now()) * 1000n + BigInt(safeCounter);
}

function postJson(url: string, json: string): ReturnType<typeof send> {
  return send(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: json,
  });
}

/** POST /plants with a body sent in chunks: no Content-Length for the route to go by. */
async function postPlantChunked(
  baseUrl: string,
  json: string,
): Promise<{ status: number; body: unknown }> {
  const bytes = new TextEncoder().encode(json);
  const response = await fetch(`${baseUrl}/plants`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/json',
    },
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
    duplex: 'half',
  });
  return { status: response.status, body: await response.json() };
}

/** What each adapter's own JSON parser does where the route never sees the body. */
const HOST_PARSER = {
  // body-parser's json(): 100 kB.
  express: {
    overLimit: 200_000,
    tooLarge: { statusCode: 413, message: 'request entity too large' },
    compressed: { status: 415, body: errorBody(415) },
  },
  // Fastify's: 1 MiB (Nest answers its errors with their status and message).
  fastify: {
    overLimit: 2_000_000,
    tooLarge: {
      statusCode: 413,
      message: 'Request body is too large',
    },
    compressed: {
      status: 400,
      body: {
        statusCode: 400,
        message:
          "Body is not valid JSON but content-type is set to 'application/json'",
      },
    },
  },
} as const;

const OVER_16KB = `{"id": 1, "name": "Fern", "note": "${'x'.repeat(20_000)}"}`;
const LIMIT_MESSAGE = 'The request body is larger than the limit of 16kb.';

describe.each(HOST_ADAPTERS)(
  "the modules in a host with Nest's body parser on (rawBody: true, as the guide says), on %s",
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [PlantsModule.forRoot(), AuthModule.forRoot({ tokens: [TOKEN] })],
        { adapter },
      );
    });
    afterAll(() => host?.app.close());

    it("installs nothing on the host's HTTP server: the listeners of a host without the modules", async () => {
      const listenersOf = (server: Server) =>
        Object.fromEntries(
          server
            .eventNames()
            .map((event) => [String(event), server.listenerCount(event)]),
        );
      const server = host.app.getHttpServer() as Server;
      // On Express, requests go straight to the host's application, through nothing else.
      if (adapter === 'express')
        expect(server.listeners('request')).toEqual([
          host.app.getHttpAdapter().getInstance(),
        ]);
      const bare = await startHost([], { adapter });
      try {
        expect(listenersOf(server)).toEqual(
          listenersOf(bare.app.getHttpServer() as Server),
        );
      } finally {
        await bare.app.close();
      }
    });

    it('creates a plant with an exact id, and stores it', async () => {
      const id = safeId();
      const answer = await postPlant(
        host.url,
        newPlantJson(id, 'Fern', 'shade'),
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern', tag: 'shade' });
      expect(await storedPlant(host.dataSource, id)).toEqual({
        id: id.toString(),
        name: 'Fern',
        tag: 'shade',
      });
    });

    it("keeps the host's own JSON route as it was: its body arrives, no token needed", async () => {
      const order = await postJson(
        `${host.url}/orders`,
        '{"item": "watering can", "count": 2}',
      );
      expect(order.status).toBe(201);
      expect(order.body).toEqual({
        received: { item: 'watering can', count: 2 },
      });
    });

    it("keeps the host's own error answers (Nest's), while the plant route answers with Error bodies", async () => {
      const missing = await send(`${host.url}/orders/missing`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({
        statusCode: 404,
        message: 'No such order',
        error: 'Not Found',
      });

      const unauthenticated = await postPlant(
        host.url,
        newPlantJson(safeId(), 'Fern'),
        { token: null },
      );
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers.get('www-authenticate')).toBe(
        'Bearer realm="plant-store"',
      );
      expect(unauthenticated.body).toEqual(
        errorBody(
          401,
          'A valid bearer token is required in the Authorization header.',
        ),
      );

      const invalid = await postPlant(host.url, '{"id": "12", "name": "Fern"}');
      expectErrorAnswer(invalid, 400, ID_RULE);

      const notJson = await send(`${host.url}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/x-www-form-urlencoded',
        },
        body: 'id=1&name=Fern',
      });
      expectErrorAnswer(notJson, 415);

      const id = safeId();
      expect((await postPlant(host.url, newPlantJson(id, 'Fern'))).status).toBe(
        200,
      );
      const conflict = await postPlant(host.url, newPlantJson(id, 'Ivy'));
      expectErrorAnswer(conflict, 409);

      const wrongMethod = await send(`${host.url}/plants`);
      expectErrorAnswer(wrongMethod, 405);
    });

    it("holds a declared length to the route's limit (413), while your parser's own limit stays yours", async () => {
      const overLimit = await postPlant(host.url, OVER_16KB);
      expectErrorAnswer(overLimit, 413, LIMIT_MESSAGE);

      // Over the host parser's own limit: refused before any route, by the host's own
      // handling, in its own words.
      const overParser = await postPlant(
        host.url,
        `{"id": 1, "name": "${'x'.repeat(HOST_PARSER[adapter].overLimit)}"}`,
      );
      expect(overParser.status).toBe(413);
      expect(overParser.body).toEqual(HOST_PARSER[adapter].tooLarge);
    });

    it('refuses what the service refuses in a body it can see: not an object (400), compressed (415)', async () => {
      const array = await postPlant(host.url, '[]');
      expectErrorAnswer(array, 400, 'The request body must be a JSON object.');

      // Express's parser inflates it, and the route still refuses a compressed body, as the
      // service does; Fastify's takes the compressed bytes for JSON and refuses them itself.
      const gzipped = await send(`${host.url}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          'Content-Encoding': 'gzip',
        },
        body: gzipSync(newPlantJson(safeId(), 'Fern')),
      });
      expect({ status: gzipped.status, body: gzipped.body }).toEqual(
        HOST_PARSER[adapter].compressed,
      );
    });
  },
);

describe('a host whose JSON parser would round ids beyond 2^53 (issue 30)', () => {
  const modules = () => [
    PlantsModule.forRoot(),
    AuthModule.forRoot({ tokens: [TOKEN] }),
  ];

  it("does not start on Nest's defaults without rawBody: the message names rawBody", async () => {
    await expect(
      startHost(modules(), { options: { rawBody: false } }),
    ).rejects.toThrow(/PlantsModule: .*rawBody: true/);
  });

  it('does not start with a JSON parser of its own that keeps no raw body', async () => {
    await expect(
      startHost(modules(), {
        options: { bodyParser: false },
        configure: (app) => {
          app.use(json());
        },
      }),
    ).rejects.toThrow(/PlantsModule: .*rawBody: true/);
  });

  it('on Fastify, which the start cannot ask, refuses an id beyond 2^53 with a 500 instead of storing it rounded', async () => {
    const host = await startHost(modules(), {
      options: { rawBody: false },
      adapter: 'fastify',
    });
    try {
      const beyond = 2n ** 53n + 1n;
      const answer = await postPlant(host.url, newPlantJson(beyond, 'Fern'));
      expectErrorAnswer(answer, 500);
      expect(await storedPlant(host.dataSource, beyond)).toBeUndefined();
      expect(await storedPlant(host.dataSource, beyond - 1n)).toBeUndefined();
      const within = safeId();
      expect(
        (await postPlant(host.url, newPlantJson(within, 'Fern'))).status,
      ).toBe(200);
      expect(await storedPlant(host.dataSource, within)).toMatchObject({
        id: within.toString(),
      });
    } finally {
      await host.app.close();
    }
  });

  it('starts with the body parser off, and creates exact ids', async () => {
    const host = await startHost(modules(), { options: { bodyParser: false } });
    try {
      const id = uniqueId();
      expect((await postPlant(host.url, newPlantJson(id, 'Fern'))).status).toBe(
        200,
      );
      expect(await storedPlant(host.dataSource, id)).toMatchObject({
        id: id.toString(),
      });
    } finally {
      await host.app.close();
    }
  });
});

describe.each(HOST_ADAPTERS)(
  'the modules in a host created with rawBody: true, on %s',
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [PlantsModule.forRoot(), AuthModule.forRoot({ tokens: [TOKEN] })],
        { options: { rawBody: true }, adapter },
      );
    });
    afterAll(() => host?.app.close());

    it('creates plants with exact ids over the whole int64 range, beyond 2^53 included', async () => {
      for (const id of [INT64_MAX, INT64_MIN, uniqueId()]) {
        const answer = await postPlant(host.url, newPlantJson(id, 'Fern'));
        expect(answer.status).toBe(200);
        expect(await storedPlant(host.dataSource, id)).toEqual({
          id: id.toString(),
          name: 'Fern',
          tag: null,
        });
      }
      const tooLarge = await postPlant(
        host.url,
        newPlantJson(INT64_MAX + 1n, 'Fern'),
      );
      expectErrorAnswer(tooLarge, 400);
    });

    it("holds the raw body to the route's own rules: a body over its limit is 413, chunked too", async () => {
      const answer = await postPlant(
        host.url,
        `{"id": 1, "name": "${'x'.repeat(20_000)}"}`,
      );
      expectErrorAnswer(answer, 413);
      // Without rawBody only a declared length can be held to the limit.
      const chunked = await postPlantChunked(host.url, OVER_16KB);
      expectErrorAnswer(chunked, 413, LIMIT_MESSAGE);
    });

    it("keeps the host's own JSON route as it was", async () => {
      const order = await postJson(`${host.url}/orders`, '{"item": "pot"}');
      expect(order.body).toEqual({ received: { item: 'pot' } });
    });
  },
);

describe.each(HOST_ADAPTERS)(
  "the modules in a host on Nest's defaults with a global prefix, on %s",
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [PlantsModule.forRoot(), AuthModule.forRoot({ tokens: [TOKEN] })],
        { configure: (app) => app.setGlobalPrefix('api'), adapter },
      );
    });
    afterAll(() => host?.app.close());

    it('serves POST /api/plants, and nothing at /plants', async () => {
      const id = safeId();
      const answer = await postPlant(
        `${host.url}/api`,
        newPlantJson(id, 'Fern'),
      );
      expect(answer.status).toBe(200);
      expect((await storedPlant(host.dataSource, id))?.id).toBe(id.toString());
      expect(
        (await postPlant(host.url, newPlantJson(uniqueId(), 'Fern'))).status,
      ).toBe(404);
      const order = await postJson(`${host.url}/api/orders`, '{"item": "pot"}');
      expect(order.body).toEqual({ received: { item: 'pot' } });
    });
  },
);

/**
 * The most common Nest setup: a global ValidationPipe. Nest runs global pipes before a
 * parameter's own, so a pipe that validated the plant body would refuse with its own words,
 * unknown keys (forbidNonWhitelisted) or convert "12" to 12 (enableImplicitConversion).
 */
describe.each([
  {
    setup: 'new ValidationPipe(), body parser on',
    pipe: () => new ValidationPipe(),
    options: {},
    id: safeId,
  },
  {
    setup:
      'a strict ValidationPipe (whitelist, forbidNonWhitelisted, implicit conversion), rawBody',
    pipe: () =>
      new ValidationPipe({
        whitelist: true,
        forbidNonWhitelisted: true,
        transform: true,
        transformOptions: { enableImplicitConversion: true },
      }),
    options: { rawBody: true },
    id: uniqueId,
  },
])(
  'the modules in a host with a global ValidationPipe: $setup',
  ({ pipe, options, id: nextId }) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [PlantsModule.forRoot(), AuthModule.forRoot({ tokens: [TOKEN] })],
        { options, configure: (app) => app.useGlobalPipes(pipe()) },
      );
    });
    afterAll(() => host?.app.close());

    it('creates plants with exact ids, unknown keys ignored as the service ignores them', async () => {
      const id = nextId();
      const answer = await postPlant(
        host.url,
        `{"id": ${id}, "name": "Fern", "colour": "green"}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ name: 'Fern' });
      expect(await storedPlant(host.dataSource, id)).toEqual({
        id: id.toString(),
        name: 'Fern',
        tag: null,
      });
    });

    it('creates a plant whatever its unknown keys hold, prototype keys included (issue 29)', async () => {
      for (const extra of ['{"constructor": []}', '[{"prototype": {}}]']) {
        const answer = await postPlant(
          host.url,
          `{"id": ${nextId()}, "name": "Fern", "x": ${extra}}`,
        );
        expect(answer.status, extra).toBe(200);
        expect(answer.body, extra).toEqual({ name: 'Fern' });
      }
    });

    it("refuses bad input with the service's status and whole Error body", async () => {
      for (const json of [
        '{"id": "12", "name": "Fern"}',
        '{"id": 12.5, "name": "Fern"}',
      ]) {
        const answer = await postPlant(host.url, json);
        expect(answer.status, json).toBe(400);
        expect(answer.body, json).toEqual(errorBody(400, ID_RULE));
      }
      const noName = await postPlant(host.url, `{"id": ${nextId()}}`);
      expectErrorAnswer(noName, 400, 'name is required.');
    });

    it("leaves the host's own routes to the host's pipe and its answers", async () => {
      const refused = await postJson(`${host.url}/orders/validated`, '{}');
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: ['item must be a string'],
      });
      const placed = await postJson(
        `${host.url}/orders/validated`,
        '{"item": "pot"}',
      );
      expect(placed.status).toBe(201);
      expect(placed.body).toEqual({ received: { item: 'pot' } });
    });
  },
);

describe.each(HOST_ADAPTERS)(
  "the modules in a host on Nest's defaults with a token rate limit, on %s",
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [
          PlantsModule.forRoot(),
          AuthModule.forRoot({ tokens: [TOKEN], tokenRateLimit: 1 }),
        ],
        { adapter },
      );
    });
    afterAll(() => host?.app.close());

    it('answers 429 with Retry-After and the Error body past the limit', async () => {
      const id = safeId();
      expect((await postPlant(host.url, newPlantJson(id, 'Fern'))).status).toBe(
        200,
      );
      const limited = await postPlant(host.url, newPlantJson(safeId(), 'Ivy'));
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(limited.body).toEqual(errorBody(429));
    });
  },
);

/** A team's own verifier: accepts one token of its own, and records what it was asked. */
@Injectable()
class TeamVerifier extends TokenVerifier {
  static readonly asked: string[] = [];

  verify(token: string): Promise<AuthenticatedClient | undefined> {
    TeamVerifier.asked.push(token);
    return Promise.resolve(
      token === 'team-token-0123456789' ? { name: 'team' } : undefined,
    );
  }
}

describe.each(HOST_ADAPTERS)(
  'AuthModule with a verifier of the host and a global guard, on %s',
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      TeamVerifier.asked.length = 0;
      host = await startHost(
        [
          PlantsModule.forRoot(),
          AuthModule.forRoot({
            tokenVerifier: TeamVerifier,
            globalGuard: true,
          }),
        ],
        { options: { rawBody: true }, adapter },
      );
    });
    afterAll(() => host?.app.close());

    it("lets the host's verifier decide: its token passes, the service's does not", async () => {
      const id = uniqueId();
      const accepted = await postPlant(host.url, newPlantJson(id, 'Fern'), {
        token: 'team-token-0123456789',
      });
      expect(accepted.status).toBe(200);
      expect(await storedPlant(host.dataSource, id)).toBeDefined();

      const refused = await postPlant(
        host.url,
        newPlantJson(uniqueId(), 'Fern'),
      );
      expectErrorAnswer(refused, 401);
      expect(TeamVerifier.asked).toEqual(['team-token-0123456789', TOKEN]);
    });

    it("guards the host's own routes too when the guard is global", async () => {
      const order = await postJson(`${host.url}/orders`, '{"item": "pot"}');
      expect(order.status).toBe(401);
    });
  },
);

/** Settings a host keeps in a provider of its own, given through forRootAsync. */
@Injectable()
class HostSettings {
  readonly bodyLimit = '100b';
  readonly tokens = ['async-token-0123456789'];
}

@Module({ providers: [HostSettings], exports: [HostSettings] })
class HostSettingsModule {}

describe.each(HOST_ADAPTERS)(
  'the modules configured with forRootAsync from a provider of the host, on %s',
  (adapter) => {
    let host: Host;
    beforeAll(async () => {
      host = await startHost(
        [
          PlantsModule.forRootAsync({
            imports: [HostSettingsModule],
            inject: [HostSettings],
            useFactory: (settings: HostSettings) => ({
              bodyLimit: settings.bodyLimit,
            }),
          }),
          AuthModule.forRootAsync({
            imports: [HostSettingsModule],
            inject: [HostSettings],
            useFactory: (settings: HostSettings) => ({
              tokens: settings.tokens,
            }),
          }),
        ],
        { options: { rawBody: true }, adapter },
      );
    });
    afterAll(() => host?.app.close());

    it("applies the provider's settings: its token, its body limit", async () => {
      const token = 'async-token-0123456789';
      const id = uniqueId();
      expect(
        (await postPlant(host.url, newPlantJson(id, 'Fern'), { token })).status,
      ).toBe(200);
      expect(
        (await postPlant(host.url, newPlantJson(uniqueId(), 'Fern'))).status,
      ).toBe(401);
      const long = await postPlant(
        host.url,
        newPlantJson(uniqueId(), 'x'.repeat(100)),
        { token },
      );
      expectErrorAnswer(
        long,
        413,
        'The request body is larger than the limit of 100b.',
      );
    });
  },
);
