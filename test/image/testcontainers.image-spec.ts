import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  getContainerRuntimeClient,
  getReaper,
  LABEL_TESTCONTAINERS_SESSION_ID,
} from 'testcontainers';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';
import { errorBody } from '../support/http.js';
import { ROOT } from '../support/packed-package.js';
import { pageFiles } from '../support/page-blocks.js';
import { newPlantJson, postPlant, uniqueId } from '../support/plants.js';
import {
  type ApiService,
  buildPostgresStandIn,
  podman,
  run,
  startApiService,
} from '../support/image/podman.js';
import { report, seconds } from '../support/report.js';
import { eventually } from '../support/poll.js';

// plant-store/testcontainers (src/service/testcontainers/) on this machine's rootful podman, through
// its Docker-compatible API: the page's global setup, run as it is written, starts the
// image the project's setup built beside a PostgreSQL container on a network of their own.

const PAGE = join(ROOT, 'docs', 'testing-against-plant-store.md');
const SETUP_FILE = 'plant-store.containers.global-setup.ts';

type Teardown = () => Promise<void>;
type GlobalSetup = (project: TestProject) => Promise<Teardown>;

/** What a podman listing (`ps`, `network ls`) shows of Testcontainers' session `label`. */
async function labelled(label: string, listing: string[]): Promise<string[]> {
  const lines = await podman(...listing, '--filter', `label=${label}`);
  return lines === '' ? [] : lines.split('\n');
}
const sessionContainers = (label: string) =>
  labelled(label, ['ps', '--all', '--quiet']);
const sessionNetworks = (label: string) =>
  labelled(label, ['network', 'ls', '--format', '{{.Name}}']);

describe("plant-store/testcontainers on podman's Docker API", () => {
  let api: ApiService | undefined;
  let project: string;
  let label: string;
  let store: { url: string; token: string } | undefined;
  let teardown: Teardown | undefined;

  beforeAll(async () => {
    let started = Date.now();
    const postgresImage = await buildPostgresStandIn();
    report(
      `PostgreSQL stand-in ${postgresImage}: built in ${seconds(Date.now() - started)}`,
    );
    started = Date.now();
    api = await startApiService();
    report(`podman system service: answering after ${Date.now() - started} ms`);
    // As the page says, before Testcontainers' first call (it reads them then), in this
    // file's own worker (Vitest isolates files). Ryuk's image comes from Docker Hub, which no
    // registry here supplies.
    process.env.DOCKER_HOST = api.dockerHost;
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';
    process.env.PLANT_STORE_IMAGE = inject('plantStoreImage');
    process.env.POSTGRES_IMAGE = postgresImage;
    // The session every container and network of this run is labelled with (the reaper's,
    // kept by Testcontainers for the process).
    const { sessionId } = await getReaper(await getContainerRuntimeClient());
    label = `${LABEL_TESTCONTAINERS_SESSION_ID}=${sessionId}`;

    // A host project as another team has one: the package under node_modules, the page's
    // file beside it.
    project = await mkdtemp(join(tmpdir(), 'plant-store-containers-'));
    await mkdir(join(project, 'node_modules'));
    await symlink(ROOT, join(project, 'node_modules', 'plant-store'));
    const setup = (await pageFiles(PAGE)).get(SETUP_FILE);
    if (setup === undefined)
      throw new Error(`${PAGE} has no block for ${SETUP_FILE}`);
    await writeFile(join(project, SETUP_FILE), setup);
  }, 5 * 60_000);

  afterAll(async () => {
    try {
      // Only when a check failed before stop(): what the run left is removed all the same.
      await teardown?.();
      if (label !== undefined) {
        for (const container of await sessionContainers(label))
          await run('podman', ['rm', '--force', container]);
        for (const network of await sessionNetworks(label))
          await run('podman', ['network', 'rm', network]);
      }
    } finally {
      await api?.stop();
      if (project !== undefined)
        await rm(project, { recursive: true, force: true });
    }
  }, 60_000);

  it("starts with the page's global setup: the image and PostgreSQL, both on a network of their own", async () => {
    const setup = (
      (await import(join(project, SETUP_FILE))) as { default: GlobalSetup }
    ).default;
    const provided = new Map<string, unknown>();
    const started = Date.now();
    teardown = await setup({
      provide: (key: string, value: unknown) => provided.set(key, value),
    } as unknown as TestProject);
    report(`PlantStoreContainer.start(): ${Date.now() - started} ms`);
    store = provided.get('plantStore') as { url: string; token: string };
    expect(store).toEqual({
      // The engine's host as Testcontainers finds it: where /.dockerenv exists (this
      // machine has one), the gateway of podman's default network.
      url: expect.stringMatching(/^http:\/\/[^/:]+:\d+$/),
      token: expect.stringMatching(/^pst_test_/),
    });
    const containers = await sessionContainers(label);
    const networks = await sessionNetworks(label);
    expect(networks).toHaveLength(1);
    const running = await Promise.all(
      containers.map(
        async (container) =>
          JSON.parse(
            await podman(
              'inspect',
              '--format',
              '{"image": {{json .ImageName}}, "running": {{.State.Running}}, "networks": {{json .NetworkSettings.Networks}}}',
              container,
            ),
          ) as { image: string; running: boolean; networks: object },
      ),
    );
    expect(
      running.map(({ image, running, networks }) => ({
        image,
        running,
        networks: Object.keys(networks),
      })),
    ).toEqual(
      expect.arrayContaining([
        {
          image: inject('plantStoreImage'),
          running: true,
          networks: networks,
        },
        {
          image: process.env.POSTGRES_IMAGE,
          running: true,
          networks: networks,
        },
      ]),
    );
    expect(running).toHaveLength(2);
    // The URL's port is the one podman mapped to the service's 3000.
    const service =
      containers[
        running.findIndex(({ image }) => image === inject('plantStoreImage'))
      ];
    expect(await podman('port', service, '3000/tcp')).toMatch(
      new RegExp(`:${new URL(store.url).port}$`),
    );
  });

  it('creates a plant with the token it returned (200), and answers 401 without a token', async () => {
    expect(store).toBeDefined();
    const { url, token } = store!;
    const created = await postPlant(
      url,
      newPlantJson(uniqueId(), 'Monstera', 'tropical'),
      { token },
    );
    expect({ status: created.status, body: created.body }).toEqual({
      status: 200,
      body: { name: 'Monstera', tag: 'tropical' },
    });
    const refused = await postPlant(url, newPlantJson(uniqueId(), 'Fern'), {
      token: null,
    });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 401,
      body: errorBody(401),
    });
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('reset(), managed tokens and the database paused by the engine, on a PlantStoreContainer of its own', async () => {
    const { PlantStoreContainer } = (await import(
      join(ROOT, 'dist', 'service', 'testcontainers', 'index.js')
    )) as typeof import('../../src/service/testcontainers/index.js');
    const own = await new PlantStoreContainer(inject('plantStoreImage'))
      .withPostgresImage(process.env.POSTGRES_IMAGE ?? '')
      // A create gives up on a held database after this, rather than 2 s.
      .withEnvironment({ DATABASE_REQUEST_TIMEOUT_MS: '500' })
      .start();
    try {
      const create = (name: string, token = own.token) =>
        postPlant(own.url, newPlantJson(1n, name), { token });
      expect((await create('Fern')).status).toBe(200);
      expect((await create('Palm')).status).toBe(409);
      await own.reset();
      expect((await create('Palm')).body).toEqual({ name: 'Palm' });

      const managed = await own.tokens.create();
      await own.reset();
      expect((await create('Ivy', managed)).status).toBe(200);
      await own.tokens.revoke(managed);
      const refused = await create('Ivy', managed);
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 401,
        body: errorBody(401),
      });

      await own.reset();
      const outage = await own.faults.databaseDown(60_000);
      const down = await create('Cactus');
      expect({ status: down.status, body: down.body }).toEqual({
        status: 503,
        body: errorBody(503, 'The database is unavailable; retry later.'),
      });
      await outage.end();
      await outage.over;
      await eventually(
        'a create once the database answers again',
        async () =>
          (await create('Cactus')).status === 200 ? true : undefined,
        { everyMs: 100 },
      );
    } finally {
      await own.stop();
    }
  }, 120_000);

  it('stop() leaves no container and no network of the run', async () => {
    expect(teardown).toBeDefined();
    const containers = await sessionContainers(label);
    const [network] = await sessionNetworks(label);
    expect(containers).toHaveLength(2);
    const started = Date.now();
    const stop = teardown!;
    teardown = undefined;
    await stop();
    report(`stop(): ${Date.now() - started} ms`);
    expect(await sessionContainers(label)).toEqual([]);
    expect(await sessionNetworks(label)).toEqual([]);
    // By id and name too, whatever their labels.
    for (const container of containers)
      expect(
        (await run('podman', ['container', 'exists', container])).code,
      ).toBe(1);
    expect((await run('podman', ['network', 'exists', network])).code).toBe(1);
  });
});
