import { existsSync } from 'node:fs';
import { readFile, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { send } from '../support/http.js';
import { newPlantJson, postPlant, uniqueId } from '../support/plants.js';
import { runCommand } from '../support/command.js';
import { migratedDatabase } from '../support/migrated-database.js';
import { createScratchDatabase } from '../support/scratch-database.js';
import {
  guideBlock,
  hostFromGuide,
  INSTALL_TIMEOUT_MS,
  manifestOf,
  run,
  withGuideHost,
} from '../support/packed-package.js';

const SCHEMA_SECTION = 'Tables in a schema of yours';
const TOKENS_SECTION = 'Managed tokens in your application';

/** What the package peers: one copy each, the host's, shared with the modules. */
const FRAMEWORK = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/typeorm',
  'reflect-metadata',
  'rxjs',
  'typeorm',
];
/**
 * What a host application has in its own package.json: Nest and its HTTP adapter (the
 * guide's is Express; the package peers either, optionally), TypeORM and the driver.
 */
const HOST_ADAPTER = '@nestjs/platform-express';
const HOST_PACKAGES = [...FRAMEWORK, HOST_ADAPTER, 'pg'];

/** `use` on a connection of its own to `databaseUrl`, closed after. */
async function withClient<T>(
  databaseUrl: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

async function storedName(
  databaseUrl: string,
  id: bigint,
): Promise<string | undefined> {
  const { rows } = await withClient(databaseUrl, (client) =>
    client.query<{ name: string }>(
      'SELECT name FROM plants WHERE id = $1::bigint',
      [id.toString()],
    ),
  );
  return rows[0]?.name;
}

/**
 * The package as another team gets it: `npm pack` of the built project, installed as a
 * dependency of a host that has its own Nest, TypeORM and pg (as any Nest application
 * does), imported by its name from the guide's own example, compiled with TypeScript
 * against the package's types, and run.
 */
describe('the packed package, installed and imported by name', () => {
  let folder: string;

  beforeAll(async () => {
    folder = await hostFromGuide('plant-store-host-', HOST_PACKAGES, {
      'host.ts': undefined,
      'data-source.ts': SCHEMA_SECTION,
    });
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('exports the public surface by name, and nothing by path', async () => {
    const script = [
      "const surface = await import('plant-store');",
      'console.log(JSON.stringify(Object.keys(surface).sort()));',
      "await import('plant-store/dist/service/main.js').then(() => console.log('deep'), (e) => console.log(e.code));",
    ].join('\n');
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: folder },
    );
    const [names, deep] = stdout.trim().split('\n');
    expect(JSON.parse(names ?? '[]')).toEqual(
      expect.arrayContaining([
        'AuthModule',
        'ErrorBody',
        'NewPlant',
        'PLANT_STORE_MIGRATIONS',
        'Plant',
        'PlantsModule',
        'Public',
        'TokenVerifier',
      ]),
    );
    expect(deep).toBe('ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it('shares one copy of Nest and TypeORM with the host: the package peers them', async () => {
    const { stdout } = await run(
      'npm',
      ['ls', ...FRAMEWORK, '--all', '--parseable'],
      { cwd: folder },
    );
    const root = await realpath(folder);
    expect(stdout.trim().split('\n').sort()).toEqual(
      FRAMEWORK.map((name) => join(root, 'node_modules', name)).sort(),
    );
    const manifest = await manifestOf(
      join(folder, 'node_modules', 'plant-store'),
    );
    const optional = manifest.peerDependenciesMeta ?? {};
    const peers = Object.keys(manifest.peerDependencies ?? {});
    expect(
      peers.filter((name) => optional[name]?.optional !== true).sort(),
    ).toEqual(FRAMEWORK);
    // The optional peers are a host's choice (plant.created, plant-store/testing and
    // /testcontainers): npm leaves them out, and the guide's host runs without them.
    const optionalPeers = peers.filter(
      (name) => optional[name]?.optional === true,
    );
    expect(optionalPeers).toContain('@nestjs/event-emitter');
    for (const name of optionalPeers)
      expect(existsSync(join(folder, 'node_modules', name)), name).toBe(false);
    // Express is the service's own adapter by default (issue 41), so a dependency: with the
    // host's, npm keeps one copy.
    expect(Object.keys(manifest.dependencies ?? {})).toContain(HOST_ADAPTER);
    const adapters = await run(
      'npm',
      ['ls', HOST_ADAPTER, '--all', '--parseable'],
      { cwd: folder },
    );
    expect(adapters.stdout.trim().split('\n')).toEqual([
      join(root, 'node_modules', HOST_ADAPTER),
    ]);
    expect(
      Object.keys(manifest.dependencies ?? {}).filter((name) =>
        FRAMEWORK.includes(name),
      ),
    ).toEqual([]);
  });

  it("runs the guide's application: plants created with exact ids, its own route's body kept", async () => {
    await withGuideHost(
      folder,
      { database: 'package', args: [join(folder, 'out', 'host.js')] },
      async ({ url, databaseUrl }) => {
        const id = uniqueId();
        const created = await postPlant(url, newPlantJson(id, 'Fern'));
        expect(created.status).toBe(200);
        expect(created.body).toEqual({ name: 'Fern' });
        expect(await storedName(databaseUrl, id)).toBe('Fern');

        const order = await send(`${url}/orders`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"item": "pot"}',
        });
        expect(order.status).toBe(201);
        expect(order.body).toEqual({ placed: 'pot' });
      },
    );
  }, 60_000);
  /** A command of the host (npx finds the host's own bins), on `databaseUrl`. */
  function inHost(databaseUrl: string, command: string, args: string[]) {
    return runCommand(command, args, {
      cwd: folder,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: databaseUrl,
        NO_COLOR: '1',
      },
    });
  }

  it("migrates into the schema section's DataSource with the TypeORM CLI, after which migration:generate finds nothing", async () => {
    const databaseUrl = await createScratchDatabase(
      inject('databaseUrl'),
      'hostschema',
    );
    await withClient(databaseUrl, (sql) => sql.query('CREATE SCHEMA shop'));
    const typeorm = (...args: string[]) =>
      inHost(databaseUrl, 'npx', [
        'typeorm',
        ...args,
        '-d',
        join('out', 'data-source.js'),
      ]);
    expect(await typeorm('migration:run')).toMatchObject({ code: 0 });
    expect(
      await typeorm('migration:generate', join('out', 'Nothing'), '--check'),
    ).toMatchObject({ code: 0 });
    const tables = await withClient(databaseUrl, (sql) =>
      sql.query<{ schema: string }>(
        `SELECT DISTINCT table_schema AS schema FROM information_schema.tables
         WHERE table_name IN ('plants', 'api_tokens', 'commit_probe')`,
      ),
    );
    expect(tables.rows).toEqual([{ schema: 'shop' }]);
  }, 60_000);

  it("runs the token section's commands as written, on tables in a schema, from the host's node_modules", async () => {
    const databaseUrl = await migratedDatabase('hosttokens', 'shop');
    const lines = (await guideBlock('sh', TOKENS_SECTION))
      .split('\n')
      .filter((line) => line.trim() !== '');
    const [create, list, revoke] = lines;
    expect(lines).toHaveLength(3);

    const created = await inHost(databaseUrl, 'sh', ['-c', create ?? '']);
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n').at(-1)).toMatch(/^pst_[\w-]{43}$/);
    const listed = await inHost(databaseUrl, 'sh', ['-c', list ?? '']);
    expect(listed.stdout).toMatch(/^ci\s+\S+\s+\S+\s+active$/m);
    expect((await inHost(databaseUrl, 'sh', ['-c', revoke ?? ''])).code).toBe(
      0,
    );
    const stored = await withClient(databaseUrl, (sql) =>
      sql.query<{ revoked: boolean }>(
        "SELECT revoked_at IS NOT NULL AS revoked FROM shop.api_tokens WHERE name = 'ci'",
      ),
    );
    expect(stored.rows).toEqual([{ revoked: true }]);
  }, 60_000);

  it('installs plant-store-token, which works on the default schema and names itself in its usage; the token docs are in the package', async () => {
    const databaseUrl = await migratedDatabase('hostbin');
    const created = await inHost(databaseUrl, 'npx', [
      'plant-store-token',
      'create',
      '--name',
      'deploy',
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n').at(-1)).toMatch(/^pst_[\w-]{43}$/);

    const misused = await inHost(databaseUrl, 'npx', [
      'plant-store-token',
      'rotate',
    ]);
    expect(misused.code).toBe(2);
    expect(misused.stderr).toMatch(/^Usage:\n {2}plant-store-token create /);
    await expect(
      readFile(
        join(folder, 'node_modules', 'plant-store', 'docs', 'tokens.md'),
        'utf8',
      ),
    ).resolves.toContain('# Auth and tokens');
  }, 60_000);
});
