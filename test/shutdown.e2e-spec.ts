import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { freePort } from '../test-kit/free-port.mjs';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { eventually } from './support/poll.js';
import {
  connectError,
  parseResponse,
  RawConnection,
  type RawResponse,
} from './support/raw-http.js';
import { ServiceProcess, startReady } from './support/service-process.js';
import { TEST_TOKENS, TOKEN } from './support/tokens.js';

async function startService(
  settings: Record<string, string> = {},
): Promise<{ service: ServiceProcess; port: number }> {
  return startReady(inject('databaseUrl'), settings);
}

/**
 * A POST whose headers are sent with `Expect: 100-continue`: once the server answers
 * `100 Continue`, the request has reached it and waits for its body, in flight until
 * `finish()` sends it.
 */
async function startPost(
  port: number,
  json: string,
  token: string = TOKEN,
): Promise<{ connection: RawConnection; finish(): void }> {
  const connection = await RawConnection.open(port);
  connection.write(
    `POST /plants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      'Expect: 100-continue\r\n\r\n',
  );
  await eventually('100 Continue', () =>
    connection.text.includes('100 Continue') ? true : undefined,
  );
  return { connection, finish: () => connection.write(json) };
}

/** The final answer on a connection, after any interim 100 Continue. */
function finalResponse(text: string): RawResponse {
  return parseResponse(text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ''));
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
    await eventually('the idle connection answered', () =>
      idle.text.includes('{"status":"ok",') ? true : undefined,
    );

    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received/);

    expect(await idle.closed).toContain('HTTP/1.1 200');
    expect(
      await eventually('the listener to close', () => connectError(port)),
    ).toBe('ECONNREFUSED');

    for (const request of inFlight) request.finish();
    const answers = (
      await Promise.all(inFlight.map((request) => request.connection.closed))
    ).map(finalResponse);

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

describe('repeated signals and the drain delay', () => {
  it('a repeated SIGTERM during the drain changes nothing: the slow request in flight is answered, exit 0', async () => {
    const { service, port } = await startService({
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '60000',
    });
    const id = uniqueId();
    const slow = await startPost(port, newPlantJson(id, 'Slow'));

    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received: draining/);
    expect(
      await eventually('the listener to close', () => connectError(port)),
    ).toBe('ECONNREFUSED');
    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received again: already stopping/);
    service.signal('SIGTERM');
    await service.waitFor(/(SIGTERM received again[^]*){2}/);

    slow.finish();
    const answer = finalResponse(await slow.connection.closed);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ name: 'Slow' });
    expect(await service.exitCode()).toBe(0);
    expect(await countRows([id])).toBe(1);
  });

  it('during SHUTDOWN_DELAY_MS: readiness 503 at once, new connections still served, a repeated SIGTERM changes nothing, a later SIGINT hurries; exit 0', async () => {
    const { service, port } = await startService({
      SHUTDOWN_DELAY_MS: '120000',
    });
    const base = `http://127.0.0.1:${port}`;

    service.signal('SIGTERM');
    const firstAt = Date.now();
    await service.waitFor(/still serving for 120000 ms/);
    const ready = await send(`${base}/health/ready`);
    expect(ready.status).toBe(503);
    const during = uniqueId();
    const created = await postPlant(base, newPlantJson(during, 'During'));
    expect(created.status).toBe(200);
    // The client is told to go elsewhere for its next request.
    expect(created.headers.get('connection')).toBe('close');

    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received again: already stopping/);
    const after = uniqueId();
    expect(
      (await postPlant(base, newPlantJson(after, 'After the repeat'))).status,
    ).toBe(200);

    // A person's second Ctrl+C comes at least a second after the first signal.
    await eventually('a second since the first signal', () =>
      Date.now() - firstAt > 1_100 ? true : undefined,
    );
    service.signal('SIGINT');
    expect(await service.exitCode()).toBe(0);
    expect(service.text).toMatch(/SIGINT received again: skipping/);
    expect(await countRows([during, after])).toBe(2);
  });

  it('the WEB_CONCURRENCY primary: a repeated SIGTERM does not cut its workers short; exit 0', async () => {
    const { service, port } = await startService({
      WEB_CONCURRENCY: '2',
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '60000',
    });
    await service.waitFor(/(Plant Store listening on[^]*){2}/);
    await service.waitFor(/(Database migrated and connected[^]*){2}/);
    const id = uniqueId();
    const slow = await startPost(port, newPlantJson(id, 'Slow in a worker'));

    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received: stopping 2 workers/);
    service.signal('SIGTERM');
    await service.waitFor(/SIGTERM received again: already stopping/);

    slow.finish();
    const answer = finalResponse(await slow.connection.closed);
    expect(answer.status).toBe(200);
    expect(await service.exitCode()).toBe(0);
    expect(await countRows([id])).toBe(1);
  });
});

describe('Ctrl+C in a terminal, with the embedded PostgreSQL', () => {
  const dataDir = join(tmpdir(), `plant-store-ctrl-c-${process.pid}`);
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('reaches the whole process group, yet the database outlives the drain; a second press cuts the rest and still stops the database', async () => {
    const [port, databasePort] = [await freePort(), await freePort()];
    const service = ServiceProcess.start(
      {
        DATA_DIR: dataDir,
        EMBEDDED_DATABASE_PORT: String(databasePort),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        SHUTDOWN_DELAY_MS: '60000',
        SHUTDOWN_TIMEOUT_MS: '60000',
      },
      { ownProcessGroup: true },
    );
    await service.waitFor(/Plant Store listening on/, 120_000);
    await service.waitFor(/Database migrated and connected/, 120_000);
    const token = (await readFile(join(dataDir, 'dev-token'), 'utf8')).trim();
    const [first, second] = [uniqueId(), uniqueId()];
    const answered = await startPost(
      port,
      newPlantJson(first, 'Answered'),
      token,
    );
    const cut = await startPost(port, newPlantJson(second, 'Cut'), token);

    service.signalGroup('SIGINT');
    const firstAt = Date.now();
    await service.waitFor(/SIGINT received: draining/);
    // Needs the database: had Ctrl+C stopped it, this would be a 503.
    answered.finish();
    const answer = finalResponse(await answered.connection.closed);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ name: 'Answered' });

    await eventually('a second since the first press', () =>
      Date.now() - firstAt > 1_100 ? true : undefined,
    );
    service.signalGroup('SIGINT');
    expect(await cut.connection.closed).not.toContain('HTTP/1.1 200');
    expect(await service.exitCode()).toBe(0);
    expect(await connectError(databasePort)).toBe('ECONNREFUSED');
  });
});
