import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { freePort } from './support/free-port.js';
import { newPlantJson, uniqueId } from './support/http.js';
import {
  connectError,
  parseResponse,
  RawConnection,
} from './support/raw-http.js';
import { ServiceProcess } from './support/service-process.js';
import { TEST_TOKENS, TOKEN } from './support/tokens.js';

async function startService(
  settings: Record<string, string> = {},
): Promise<{ service: ServiceProcess; port: number }> {
  const port = await freePort();
  const service = ServiceProcess.start({
    DATABASE_URL: inject('databaseUrl'),
    API_TOKENS: TEST_TOKENS.join(','),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_FORMAT: 'json',
    ...settings,
  });
  await service.waitFor(/Plant Store listening on/);
  return { service, port };
}

/** A POST whose headers and first half of body are sent: the server is now waiting on it. */
async function startPost(
  port: number,
  json: string,
): Promise<{ connection: RawConnection; finish(): void }> {
  const connection = await RawConnection.open(port);
  const half = Math.floor(json.length / 2);
  connection.write(
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json.slice(0, half)}`,
  );
  return { connection, finish: () => connection.write(json.slice(half)) };
}

async function countRows(ids: bigint[]): Promise<number> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
  try {
    const result = await client.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM plants WHERE id = ANY($1::bigint[])',
      [ids.map(String)],
    );
    return result.rows[0].count;
  } finally {
    await client.end();
  }
}

describe('graceful shutdown of the built service', () => {
  it('on SIGTERM: refuses new connections, closes idle ones, finishes every in-flight request, exits 0', async () => {
    const { service, port } = await startService({
      SHUTDOWN_TIMEOUT_MS: '10000',
    });
    const ids = Array.from({ length: 12 }, () => uniqueId());
    const inFlight = await Promise.all(
      ids.map((id) => startPost(port, newPlantJson(id, `In flight ${id}`))),
    );

    const idle = await RawConnection.open(port);
    idle.write(
      'GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n',
    );
    while (!idle.text.includes('{"status":"ok"}')) await sleep(20);
    await sleep(200); // the in-flight requests have reached the body reader

    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received/);

    expect(await idle.closed).toContain('HTTP/1.1 200');
    let refused: string | undefined;
    for (let attempt = 0; attempt < 50 && refused === undefined; attempt += 1) {
      refused = await connectError(port);
      if (refused === undefined) await sleep(50);
    }
    expect(refused).toBe('ECONNREFUSED');

    for (const request of inFlight) request.finish();
    const answers = (
      await Promise.all(inFlight.map((request) => request.connection.closed))
    ).map(parseResponse);

    for (const [index, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({
        name: `In flight ${ids[index]}`,
      });
    }
    expect(await service.exitCode()).toBe(0);
    expect(await countRows(ids)).toBe(ids.length);
  });

  it('gives up on a request that outlasts SHUTDOWN_TIMEOUT_MS, closes it, and still exits 0', async () => {
    const { service, port } = await startService({
      SHUTDOWN_TIMEOUT_MS: '1000',
    });
    const stuck = await startPost(
      port,
      newPlantJson(uniqueId(), 'Never finished'),
    );
    await sleep(200);

    service.signal('SIGTERM');

    await stuck.connection.closed;
    expect(await service.exitCode()).toBe(0);
    expect(service.text).toMatch(
      /1 request\(s\) still running after 1000 ms: closing their connections/,
    );
  });
});

describe('the log', () => {
  it('writes one JSON line per request with its id, method, route, status and duration, and no secret', async () => {
    const { service, port } = await startService({ LOG_LEVEL: 'log' });
    const base = `http://127.0.0.1:${port}`;
    const wrongToken = 'wrong-token-that-must-not-be-logged';
    try {
      await fetch(`${base}/plants`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${TOKEN}`,
          'Content-Type': 'application/json',
          'X-Request-Id': 'log-check-1',
        },
        body: newPlantJson(uniqueId(), 'Logged'),
      });
      await fetch(`${base}/plants?access_token=query-secret-value`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${wrongToken}`,
          'Content-Type': 'application/json',
          'X-Request-Id': 'log-check-2',
        },
        body: '{}',
      });
      await service.waitFor(/"log-check-2"/);
    } finally {
      expect(await service.stop()).toBe(0);
    }

    const lines = service.text
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const line = (id: string) =>
      lines.find(
        (entry) => (entry.req as { id?: string } | undefined)?.id === id,
      );
    expect(line('log-check-1')).toMatchObject({
      req: { id: 'log-check-1', method: 'POST', path: '/plants' },
      res: { statusCode: 200 },
      route: '/plants',
      responseTime: expect.any(Number),
    });
    expect(line('log-check-2')).toMatchObject({
      res: { statusCode: 401 },
      req: { path: '/plants' },
    });
    for (const secret of [
      TOKEN,
      wrongToken,
      'query-secret-value',
      ...TEST_TOKENS,
    ]) {
      expect(service.text).not.toContain(secret);
    }
  });
});
