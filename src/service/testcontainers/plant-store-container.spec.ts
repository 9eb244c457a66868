import {
  type FakeContainerEngine,
  fakeContainerEngine,
} from '../../../test/support/fake-container-engine.js';
import { TEST_INSTANCE_SETTINGS } from '../testing/test-instance.js';
import { PlantStoreContainer } from './plant-store-container.js';

/** The body of each request `request` sent, in order. */
const sent = <T>(engine: FakeContainerEngine, request: string): T[] =>
  engine.bodies
    .filter(([made]) => made === request)
    .map(([, body]) => body as T);

interface Created {
  Image: string;
  Env: string[];
  ExposedPorts?: Record<string, unknown>;
}

/** What a start asked of the engine, but for finding the runtime. */
const asked = (engine: FakeContainerEngine) =>
  engine.requests.filter(
    (request) => request !== 'GET /info' && request !== 'GET /containers/json',
  );

/** `settling` fails with the AggregateError of a stop that failed: its errors, as text. */
async function stoppingFailures(settling: Promise<unknown>): Promise<string[]> {
  const failure = await settling.then(
    () => undefined,
    (error: unknown) => error as AggregateError,
  );
  expect(failure).toBeInstanceOf(AggregateError);
  expect(failure?.message).toBe('Stopping Plant Store failed');
  return failure?.errors.map(String) ?? [];
}

describe('PlantStoreContainer.start() on an engine that cannot pull PostgreSQL', () => {
  let engine: FakeContainerEngine;

  beforeEach(async () => {
    engine = await fakeContainerEngine();
    engine.reset();
    // Time stands still: every step takes 0 ms.
    vi.useFakeTimers({ toFake: ['Date'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails naming each step with its time and the one that failed, the engine’s error as its cause, and removes the network', async () => {
    const failure = await new PlantStoreContainer().start().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure).toEqual(
      new Error(
        'PlantStoreContainer.start() failed: network: 0 ms; ' +
          'PostgreSQL container, until pg_isready: failed after 0 ms',
      ),
    );
    expect(String(failure?.cause)).toBe(
      'Error: (HTTP code 500) server error - pull refused ',
    );
    expect(asked(engine)).toEqual([
      'POST /networks/create',
      'GET /images/postgres:17/json',
      'POST /images/create',
      'DELETE /networks/network-1',
    ]);
  });

  it('runs the PostgreSQL image it is given', async () => {
    await expect(
      new PlantStoreContainer()
        .withPostgresImage('example.org/postgres:16')
        .withEnvironment({ LOG_LEVEL: 'debug' })
        .start(),
    ).rejects.toThrow('PlantStoreContainer.start() failed');
    expect(asked(engine)).toContain('GET /images/example.org/postgres:16/json');
  });

  it('says so when removing what it started fails too', async () => {
    engine.answer('DELETE /networks/', [500, { message: 'network in use' }]);
    expect(await stoppingFailures(new PlantStoreContainer().start())).toEqual([
      'Error: (HTTP code 500) server error - network in use ',
    ]);
  });

  it('fails with the engine’s own error when it cannot make the network, leaving nothing to remove', async () => {
    engine.answer('POST /networks/create', [500, { message: 'no networks' }]);
    await expect(new PlantStoreContainer().start()).rejects.toThrow(
      'no networks',
    );
    expect(asked(engine)).toEqual(['POST /networks/create']);
  });

  it('gives PostgreSQL the store’s database and user, and a random password', async () => {
    engine.answer('GET /images/', [200, {}]);
    engine.answer('POST /containers/create', [500, { message: 'no room' }]);
    await expect(new PlantStoreContainer().start()).rejects.toThrow(
      'PlantStoreContainer.start() failed: network: 0 ms; ' +
        'PostgreSQL container, until pg_isready: failed after 0 ms',
    );
    const [[, created]] = engine.bodies.filter(
      ([request]) => request === 'POST /containers/create',
    ) as [string, { Image: string; Env: string[] }][];
    expect(created.Image).toBe('postgres:17');
    expect(
      created.Env.filter((line) => !line.startsWith('POSTGRES_PASSWORD=')),
    ).toEqual(['POSTGRES_DB=plant_store', 'POSTGRES_USER=plant_store']);
    expect(created.Env).toContainEqual(
      expect.stringMatching(/^POSTGRES_PASSWORD=[\w-]{24}$/),
    );
  });
});

// After the describe above: Testcontainers remembers an image it found, and postgres:17 is found here.
describe('PlantStoreContainer.start() on an engine that runs what it is asked to', () => {
  let engine: FakeContainerEngine;

  beforeEach(async () => {
    engine = await fakeContainerEngine();
    engine.reset();
    engine.answer('GET /images/', [200, {}]);
    vi.useFakeTimers({ toFake: ['Date'] });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts PostgreSQL, then the image given on it with the settings given over its own, and says where each is', async () => {
    const store = await new PlantStoreContainer('example.org/plant-store:1')
      .withEnvironment({ LOG_LEVEL: 'debug', SHUTDOWN_DELAY_MS: '5' })
      .withEnvironment({ LOG_LEVEL: 'warn' })
      .start();
    const [postgres, service] = sent<Created>(
      engine,
      'POST /containers/create',
    );
    const password = /^POSTGRES_PASSWORD=(.+)$/.exec(postgres.Env[2])![1];
    expect(store.databaseUrl).toBe(
      `postgres://plant_store:${password}@127.0.0.1:${engine.port}/plant_store`,
    );
    expect(store.url).toBe(`http://127.0.0.1:${engine.port}`);
    expect(store.token).toMatch(/^pst_test_[\w-]{32}$/);
    expect(service.Image).toBe('example.org/plant-store:1');
    expect(service.ExposedPorts).toEqual({ '3000/tcp': {} });
    // PostgreSQL by its address on the network, the first container's.
    expect(service.Env).toEqual([
      `DATABASE_URL=postgres://plant_store:${password}@10.88.0.2:5432/plant_store`,
      `API_TOKENS=${store.token}`,
      `AUTH_FAILURE_LIMIT=${TEST_INSTANCE_SETTINGS.AUTH_FAILURE_LIMIT}`,
      'SHUTDOWN_DELAY_MS=5',
      'LOG_LEVEL=warn',
    ]);
    // Ready once pg_isready answers, then once the service says it is ready.
    expect(
      sent<{ Cmd: string[] }>(engine, 'POST /containers/container-1/exec').map(
        ({ Cmd }) => Cmd,
      ),
    ).toContainEqual([
      '/bin/sh',
      '-c',
      'pg_isready --host localhost --username plant_store --dbname plant_store',
    ]);
    expect(engine.requests).toContain('GET /health/ready');
    expect(store.steps).toEqual([
      { step: 'network', ms: 0 },
      { step: 'PostgreSQL container, until pg_isready', ms: 0 },
      { step: 'service container, until /health/ready is 200', ms: 0 },
    ]);
    await store.stop();
  });

  it('runs localhost/plant-store:local unless told otherwise', async () => {
    const store = await new PlantStoreContainer().start();
    expect(
      sent<Created>(engine, 'POST /containers/create').map(
        ({ Image }) => Image,
      ),
    ).toEqual(['postgres:17', 'localhost/plant-store:local']);
    await store.stop();
  });

  it('pauses the PostgreSQL container for a database outage', async () => {
    const store = await new PlantStoreContainer().start();
    const outage = await store.faults.databaseDown(60_000);
    await outage.end();
    expect(engine.requests.filter((r) => r.endsWith('pause'))).toEqual([
      'POST /containers/container-1/pause',
      'POST /containers/container-1/unpause',
    ]);
    await store.stop();
  });

  it('stops the service, then PostgreSQL, then the network, once however often asked', async () => {
    const store = await new PlantStoreContainer().start();
    engine.reset();
    await Promise.all([store.stop(), store.stop()]);
    await store.stop();
    expect(engine.requests).toEqual([
      'POST /containers/container-2/stop',
      'DELETE /containers/container-2',
      'POST /containers/container-1/stop',
      'DELETE /containers/container-1',
      'DELETE /networks/network-1',
    ]);
  });

  it('goes on stopping the others when one fails to stop, and says which failed', async () => {
    const store = await new PlantStoreContainer().start();
    engine.answer('POST /containers/container-2/stop', [
      500,
      { message: 'stuck' },
    ]);
    expect(await stoppingFailures(store.stop())).toEqual([
      'Error: (HTTP code 500) server error - stuck ',
    ]);
    expect(
      engine.requests.filter(
        (r) => r.startsWith('DELETE') || r.endsWith('/stop'),
      ),
    ).toEqual([
      'POST /containers/container-2/stop',
      'POST /containers/container-1/stop',
      'DELETE /containers/container-1',
      'DELETE /networks/network-1',
    ]);
  });

  it('fails naming the steps taken when the service cannot start, and removes PostgreSQL and the network', async () => {
    // An image of its own: Testcontainers remembers the images it found.
    engine.answer('GET /images/example.org/missing', [
      404,
      { message: 'none' },
    ]);
    await expect(
      new PlantStoreContainer('example.org/missing:1').start(),
    ).rejects.toThrow(
      new Error(
        'PlantStoreContainer.start() failed: network: 0 ms; ' +
          'PostgreSQL container, until pg_isready: 0 ms; ' +
          'service container, until /health/ready is 200: failed after 0 ms',
      ),
    );
    expect(engine.requests.slice(-3)).toEqual([
      'POST /containers/container-1/stop',
      'DELETE /containers/container-1',
      'DELETE /networks/network-1',
    ]);
  });

  it('fails naming the steps taken when PostgreSQL is not on the network after all', async () => {
    const running = {
      Status: 'running',
      Running: true,
      StartedAt: '1970-01-01T00:00:00.000Z',
    };
    engine.answer('GET /containers/container-1/json', [
      200,
      {
        Id: 'container-1',
        Name: '/container-1',
        Config: { Hostname: 'container-1', Labels: {} },
        State: running,
        NetworkSettings: {
          Ports: {
            '5432/tcp': [{ HostIp: '0.0.0.0', HostPort: String(engine.port) }],
          },
          Networks: {},
        },
      },
    ]);
    await expect(new PlantStoreContainer().start()).rejects.toThrow(
      new Error(
        'PlantStoreContainer.start() failed: network: 0 ms; ' +
          'PostgreSQL container, until pg_isready: 0 ms',
      ),
    );
    expect(engine.requests.slice(-3)).toEqual([
      'POST /containers/container-1/stop',
      'DELETE /containers/container-1',
      'DELETE /networks/network-1',
    ]);
  });
});
