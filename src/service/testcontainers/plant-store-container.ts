import { randomBytes } from 'node:crypto';
import { PostgreSqlContainer } from '@testcontainers/postgresql';
import {
  GenericContainer,
  Network,
  type StartedNetwork,
  Wait,
} from 'testcontainers';
import { DatabaseFaults, type StoreFaults } from '../testing/store-faults.js';
import { StoreConnection } from '../testing/store-reset.js';
import { ManagedTokens, type StoreTokens } from '../testing/store-tokens.js';
import {
  TEST_INSTANCE_SETTINGS,
  testInstanceToken,
} from '../testing/test-instance.js';
import { pausedContainer } from './paused-container.js';

/** docker/build-image.sh's tag when given none. */
const DEFAULT_IMAGE = 'localhost/plant-store:local';
/** Docker Hub's; @testcontainers/postgresql itself names no default. */
const DEFAULT_POSTGRES_IMAGE = 'postgres:17';
/** The port the image listens on (docker/Dockerfile's EXPOSE). */
const SERVICE_PORT = 3000;
const POSTGRES_PORT = 5432;
const DATABASE = 'plant_store';

export interface StartedPlantStore {
  /** The service through its mapped port on the container engine's host. */
  url: string;
  /** A bearer token the service accepts. */
  token: string;
  /** The database through its mapped port, from the test's side. */
  databaseUrl: string;
  /** How long each step of start() took, in order: where a slow start went. */
  steps: ReadonlyArray<StartStep>;
  /** Empties the plants; the service, its token and managed tokens stay. */
  reset(): Promise<void>;
  /** Managed tokens, through the token store the service keeps current. */
  tokens: StoreTokens;
  /** The database container paused by the engine for a while. */
  faults: StoreFaults;
  /** Removes both containers, then the network. */
  stop(): Promise<void>;
}

export interface StartStep {
  step: string;
  ms: number;
}

/** The steps of a start, timed, for its result and for the error of one that fails. */
class StartSteps {
  readonly taken: StartStep[] = [];
  private current: { step: string; since: number } | undefined;

  async time<T>(step: string, run: () => Promise<T>): Promise<T> {
    this.current = { step, since: Date.now() };
    const result = await run();
    this.taken.push({ step, ms: Date.now() - this.current.since });
    this.current = undefined;
    return result;
  }

  /** Each step taken with its time, then the one that failed and how long it ran. */
  summary(): string {
    const done = this.taken.map(({ step, ms }) => `${step}: ${ms} ms`);
    const failed =
      this.current === undefined
        ? []
        : [
            `${this.current.step}: failed after ${Date.now() - this.current.since} ms`,
          ];
    return [...done, ...failed].join('; ');
  }
}

interface Stoppable {
  stop(): Promise<unknown>;
}

/** The image of docker/Dockerfile beside a PostgreSQL container: `new PlantStoreContainer(image).start()`. */
export class PlantStoreContainer {
  private postgresImage = DEFAULT_POSTGRES_IMAGE;
  private env: Record<string, string> = {};

  constructor(private readonly image = DEFAULT_IMAGE) {}

  /** Another PostgreSQL image; it must read POSTGRES_USER/PASSWORD/DB and have pg_isready. */
  withPostgresImage(image: string): this {
    this.postgresImage = image;
    return this;
  }

  /** Settings of the service (docs/configuration.md) over the ones start() sets. */
  withEnvironment(env: Record<string, string>): this {
    this.env = { ...this.env, ...env };
    return this;
  }

  async start(): Promise<StartedPlantStore> {
    const token = testInstanceToken();
    const password = randomBytes(18).toString('base64url');
    const steps = new StartSteps();
    const network = await steps.time('network', () => new Network().start());
    const started: Stoppable[] = [];
    try {
      const postgres = await steps.time(
        'PostgreSQL container, until pg_isready',
        () =>
          new PostgreSqlContainer(this.postgresImage)
            .withNetwork(network)
            .withDatabase(DATABASE)
            .withUsername(DATABASE)
            .withPassword(password)
            // Not the engine's health check: podman runs it only through systemd timers.
            .withWaitStrategy(
              Wait.forAll([
                Wait.forListeningPorts(),
                Wait.forSuccessfulCommand(
                  `pg_isready --host localhost --username ${DATABASE} --dbname ${DATABASE}`,
                ),
              ]),
            )
            .start(),
      );
      started.push(postgres);
      // By address, not by alias: podman's CNI networks resolve names only with the dnsname
      // plugin, which a machine may lack.
      const inside = new URL(postgres.getConnectionUri());
      inside.hostname = postgres.getIpAddress(network.getName());
      inside.port = String(POSTGRES_PORT);
      const service = await steps.time(
        'service container, until /health/ready is 200',
        () =>
          new GenericContainer(this.image)
            .withNetwork(network)
            .withEnvironment({
              DATABASE_URL: inside.toString(),
              API_TOKENS: token,
              ...TEST_INSTANCE_SETTINGS,
              ...this.env,
            })
            .withExposedPorts(SERVICE_PORT)
            .withWaitStrategy(
              Wait.forHttp('/health/ready', SERVICE_PORT).forStatusCode(200),
            )
            .start(),
      );
      started.push(service);
      const url = `http://${service.getHost()}:${service.getMappedPort(SERVICE_PORT)}`;
      const databaseUrl = postgres.getConnectionUri();
      const connection = new StoreConnection(databaseUrl);
      const tokens = new ManagedTokens(databaseUrl, url);
      const faults = new DatabaseFaults(pausedContainer(postgres.getId()));
      let stopped: Promise<void> | undefined;
      return {
        url,
        token,
        databaseUrl,
        steps: steps.taken,
        reset: () => connection.reset(),
        tokens,
        faults,
        stop: () =>
          (stopped ??= (async () => {
            await faults.end();
            await Promise.all([connection.close(), tokens.close()]);
            await stopAll(started, network);
          })()),
      };
    } catch (error) {
      await stopAll(started, network);
      throw new Error(
        `PlantStoreContainer.start() failed: ${steps.summary()}`,
        {
          cause: error,
        },
      );
    }
  }
}

/** Newest first, then the network; each is tried even when one before it failed. */
async function stopAll(
  containers: Stoppable[],
  network: StartedNetwork,
): Promise<void> {
  const failures: unknown[] = [];
  for (const item of [...containers.toReversed(), network]) {
    try {
      await item.stop();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0)
    throw new AggregateError(failures, 'Stopping Plant Store failed');
}
