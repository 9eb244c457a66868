import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { TOKEN } from './support/tokens.js';

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
