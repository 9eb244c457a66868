import { randomBytes } from 'node:crypto';
import { PostgreSqlContainer } from '@testcontainers/postgresql';
import {
  GenericContainer,
  Network,
  type StartedNetwork,
  Wait,
} from 'testcontainers';

/** The port the image listens on (docker/Dockerfile's EXPOSE). */
const SERVICE_PORT = 3000;
const DATABASE_ALIAS = 'postgres';

export interface StartedPlantStore {
  /** The service through its mapped port on the Docker host. */
  url: string;
  /** A bearer token the service accepts. */
  token: string;
  /** The database through its mapped port, from the test's side. */
  databaseUrl: string;
  /** Removes both containers and the network. */
  stop(): Promise<void>;
}

/**
 * The image built from docker/Dockerfile (docker/build-image.sh), started beside a
 * PostgreSQL container on a network of their own, as Testcontainers' modules are used:
 * `await new PlantStoreContainer(image).start()`.
 */
export class PlantStoreContainer {
  private env: Record<string, string> = {};

  constructor(
    private readonly image = 'localhost/plant-store:latest',
    private readonly postgresImage = 'postgres:17',
  ) {}

  /** Settings of the service (docs/configuration.md) over the ones start() sets. */
  withEnvironment(env: Record<string, string>): this {
    this.env = { ...this.env, ...env };
    return this;
  }

  async start(): Promise<StartedPlantStore> {
    const token = `pst_test_${randomBytes(24).toString('base64url')}`;
    const network = await new Network().start();
    const started: { stop(): Promise<unknown> }[] = [];
    try {
      const postgres = await new PostgreSqlContainer(this.postgresImage)
        .withNetwork(network)
        .withNetworkAliases(DATABASE_ALIAS)
        .start();
      started.push(postgres);
      const inside = new URL(postgres.getConnectionUri());
      inside.hostname = DATABASE_ALIAS;
      inside.port = '5432';
      const service = await new GenericContainer(this.image)
        .withNetwork(network)
        .withEnvironment({
          DATABASE_URL: inside.toString(),
          API_TOKENS: token,
          // A suite's requests come from one address: see docs/testing-against-plant-store.md.
          AUTH_FAILURE_LIMIT: '1000000',
          SHUTDOWN_DELAY_MS: '0',
          ...this.env,
        })
        .withExposedPorts(SERVICE_PORT)
        .withWaitStrategy(
          Wait.forHttp('/health/ready', SERVICE_PORT).forStatusCode(200),
        )
        .start();
      started.push(service);
      return {
        url: `http://${service.getHost()}:${service.getMappedPort(SERVICE_PORT)}`,
        token,
        databaseUrl: postgres.getConnectionUri(),
        stop: () => stopAll(started, network),
      };
    } catch (error) {
      await stopAll(started, network);
      throw error;
    }
  }
}

async function stopAll(
  containers: { stop(): Promise<unknown> }[],
  network: StartedNetwork,
): Promise<void> {
  for (const container of containers.reverse()) await container.stop();
  await network.stop();
}
