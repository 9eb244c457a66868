import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiTokensService } from '../src/auth/api-tokens.service.js';
import { ShutdownState } from '../src/lifecycle/shutdown-state.js';
import { type RunningApp, startApp } from './support/app.js';
import { freePort } from './support/free-port.js';
import {
  errorBody,
  newPlantJson,
  postPlant,
  send,
  uniqueId,
} from './support/http.js';
import { parseResponse, RawConnection } from './support/raw-http.js';
import { OTHER_TOKEN, TOKEN } from './support/tokens.js';

const INVALID_TOKEN_CHALLENGE =
  'Bearer realm="plant-store", error="invalid_token"';

function uniqueName(label: string): string {
  return `${label}-${process.pid}-${uniqueId()}`;
}

describe('managed API tokens', () => {
  let service: RunningApp;
  let tokens: ApiTokensService;

  beforeAll(async () => {
    service = await startApp({ TOKEN_CACHE_TTL_MS: '300' });
    tokens = service.app.get(ApiTokensService);
  });
  afterAll(() => service.close());

  it('makes recognisable tokens and stores only their hash', async () => {
    const name = uniqueName('hash');
    const { token } = await tokens.create(name);

    expect(token).toMatch(/^pst_[\w-]{43}$/);
    const [row] = (await service.dataSource.query(
      "SELECT encode(token_hash, 'hex') AS hash FROM api_tokens WHERE name = $1",
      [name],
    )) as [{ hash: string }];
    expect(row.hash).toHaveLength(64);
    const everything = JSON.stringify(
      await service.dataSource.query('SELECT * FROM api_tokens'),
    );
    expect(everything).not.toContain(token.slice(4));
  });

  it('accepts an active token, and refuses it within the cache TTL once revoked', async () => {
    const name = uniqueName('revoke');
    const { token } = await tokens.create(name);
    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token,
        })
      ).status,
    ).toBe(200);

    expect(await tokens.revoke(name)).toBe(true);
    await sleep(350);
    const refused = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
      { token },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe(
      INVALID_TOKEN_CHALLENGE,
    );
    expect(refused.body).toEqual(errorBody(401));
  });

  it('refuses an expired token with 401 invalid_token', async () => {
    const { token } = await tokens.create(
      uniqueName('expired'),
      new Date(Date.now() - 1000),
    );
    const answer = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
      { token },
    );

    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe(
      INVALID_TOKEN_CHALLENGE,
    );
  });

  it('refuses a token once its expiry passes', async () => {
    const { token } = await tokens.create(
      uniqueName('short'),
      new Date(Date.now() + 400),
    );
    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token,
        })
      ).status,
    ).toBe(200);
    await sleep(450);
    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token,
        })
      ).status,
    ).toBe(401);
  });

  it('keeps accepting API_TOKENS beside the table', async () => {
    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token: OTHER_TOKEN,
        })
      ).status,
    ).toBe(200);
  });
});

describe('rate limits', () => {
  describe('failed authentication, per client address', () => {
    let service: RunningApp;
    beforeAll(async () => {
      service = await startApp({
        AUTH_FAILURE_LIMIT: '5',
        AUTH_FAILURE_WINDOW_MS: '60000',
      });
    });
    afterAll(() => service.close());

    it('answers 429 with Retry-After past the limit, while a valid token still gets through', async () => {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 8; attempt += 1) {
        statuses.push(
          (
            await postPlant(service.url, '{}', {
              token: `wrong-token-${attempt}`,
            })
          ).status,
        );
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);

      const limited = await postPlant(service.url, '{}', { token: null });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body).toEqual(
        errorBody(429, 'Too many requests; retry later.'),
      );

      expect(
        (await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'))).status,
      ).toBe(200);
    });
  });

  describe('per token, when configured', () => {
    let service: RunningApp;
    beforeAll(async () => {
      service = await startApp({
        TOKEN_RATE_LIMIT: '3',
        TOKEN_RATE_WINDOW_MS: '60000',
      });
    });
    afterAll(() => service.close());

    it('answers 429 to a token past its limit, and not to another token', async () => {
      const statuses: number[] = [];
      for (let request = 0; request < 5; request += 1) {
        statuses.push(
          (await postPlant(service.url, newPlantJson(uniqueId(), 'Fern')))
            .status,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const limited = await postPlant(
        service.url,
        newPlantJson(uniqueId(), 'Fern'),
      );
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(limited.body).toEqual(errorBody(429));

      expect(
        (
          await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
            token: OTHER_TOKEN,
          })
        ).status,
      ).toBe(200);
    });
  });

  it('has no per-token limit by default', async () => {
    const service = await startApp();
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          postPlant(service.url, newPlantJson(uniqueId(), 'Fern')),
        ),
      );
      expect(new Set(answers.map((answer) => answer.status))).toEqual(
        new Set([200]),
      );
    } finally {
      await service.close();
    }
  });
});

describe('health probes', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp();
  });
  afterAll(() => service.close());

  it.each(['/health/live', '/health/ready', '/health'])(
    'answers %s without a token',
    async (path) => {
      const answer = await send(`${service.url}${path}`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok' });
    },
  );

  it('turns readiness to 503 as soon as shutdown begins, while liveness stays 200', async () => {
    service.app.get(ShutdownState).begin();

    for (const path of ['/health/ready', '/health']) {
      const answer = await send(`${service.url}${path}`);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('2');
      expect(answer.body).toEqual(
        errorBody(503, 'The service is not ready: it is shutting down.'),
      );
    }
    expect((await send(`${service.url}/health/live`)).status).toBe(200);
  });
});

describe('metrics', () => {
  it('publishes request durations by route and status, plant outcomes, pool use and process defaults', async () => {
    const service = await startApp();
    try {
      const id = uniqueId();
      await postPlant(service.url, newPlantJson(id, 'Fern'));
      await postPlant(service.url, newPlantJson(id, 'Fern'));
      await postPlant(service.url, newPlantJson(id, 'Other'));
      await send(`${service.url}/nowhere`);

      const answer = await send(`${service.url}/metrics`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = answer.text;
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="POST",route="\/plants",status="200"\} 2$/m,
      );
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="POST",route="\/plants",status="409"\} 1$/m,
      );
      expect(text).toMatch(
        /^http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1$/m,
      );
      expect(text).toMatch(/^plants_created_total 1$/m);
      expect(text).toMatch(/^plants_replayed_total 1$/m);
      expect(text).toMatch(/^plants_conflicts_total 1$/m);
      expect(text).toMatch(/^db_pool_connections \d+$/m);
      expect(text).toMatch(/^process_cpu_seconds_total /m);
    } finally {
      await service.close();
    }
  });

  it('can be turned off', async () => {
    const service = await startApp({ METRICS_ENABLED: 'false' });
    try {
      const answer = await send(`${service.url}/metrics`);
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(errorBody(404));
    } finally {
      await service.close();
    }
  });

  it('can move to a port of its own', async () => {
    const port = await freePort();
    const service = await startApp({
      METRICS_PORT: String(port),
      HOST: '127.0.0.1',
    });
    try {
      expect((await send(`${service.url}/metrics`)).status).toBe(404);
      const own = await send(`http://127.0.0.1:${port}/metrics`);
      expect(own.status).toBe(200);
      expect(own.text).toMatch(/^process_cpu_seconds_total /m);
      expect((await send(`http://127.0.0.1:${port}/other`)).body).toEqual(
        errorBody(404),
      );
    } finally {
      await service.close();
    }
  });
});

describe('HTTP hardening', () => {
  let service: RunningApp;
  beforeAll(async () => {
    service = await startApp();
  });
  afterAll(() => service.close());

  it('sets its server timeouts on purpose', () => {
    const server = service.app.getHttpServer() as Server;
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
    expect(server.keepAliveTimeout).toBe(65_000);
  });

  it('cuts off a client that trickles its headers, with a 408 Error body', async () => {
    const slow = await startApp({ HTTP_HEADERS_TIMEOUT_MS: '1000' });
    try {
      const connection = await RawConnection.open(
        Number(new URL(slow.url).port),
      );
      connection.write('POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      let open = true;
      void connection.closed.then(() => (open = false));
      // One header line every 250 ms, never the blank line that ends them: bounded at 40.
      for (let line = 0; line < 40 && open; line += 1) {
        connection.write(`X-Slow-${line}: x\r\n`);
        await sleep(250);
      }
      expect(open).toBe(false);
      const answer = parseResponse(await connection.closed);
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual(
        errorBody(408, 'The request took too long to arrive.'),
      );
    } finally {
      await slow.close();
    }
  });

  it('sends the helmet security headers', async () => {
    const answer = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
    );
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(answer.headers.get('content-security-policy')).toContain(
      "default-src 'self'",
    );
  });

  it('echoes a sane X-Request-Id, and makes one up otherwise', async () => {
    const kept = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
      { headers: { 'X-Request-Id': 'abc-123' } },
    );
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    const replaced = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
      {
        headers: { 'X-Request-Id': 'x'.repeat(500) },
      },
    );
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends no CORS headers unless origins are configured', async () => {
    const answer = await postPlant(
      service.url,
      newPlantJson(uniqueId(), 'Fern'),
      {
        headers: { Origin: 'https://evil.example' },
      },
    );
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers CORS preflights for configured origins only', async () => {
    const cors = await startApp({ CORS_ORIGINS: 'https://app.example' });
    try {
      const preflight = (origin: string) =>
        send(`${cors.url}/plants`, {
          method: 'OPTIONS',
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization,content-type',
          },
        });
      const allowed = await preflight('https://app.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(
        'https://app.example',
      );
      const other = await preflight('https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await cors.close();
    }
  });
});

// Sanity: the default suite token still works here, so failures above are the features.
it('uses a valid default token', async () => {
  const service = await startApp();
  try {
    expect(
      (
        await postPlant(service.url, newPlantJson(uniqueId(), 'Fern'), {
          token: TOKEN,
        })
      ).status,
    ).toBe(200);
  } finally {
    await service.close();
  }
});
