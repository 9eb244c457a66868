import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { startNodeProcess } from '../test-kit/node-process.mjs';
import { freePort } from '../test-kit/free-port.mjs';
import { send } from './support/http.js';
import { newPlantJson, postPlant, uniqueId } from './support/plants.js';
import { eventually } from '../test-kit/poll.js';
import { createScratchDatabase } from './support/scratch-database.js';
import {
  compileTypeScript,
  INSTALL_TIMEOUT_MS,
  installedVersions,
  installPackedPackage,
  manifestOf,
  ROOT,
  run,
} from './support/packed-package.js';
import { TOKEN } from './support/tokens.js';

const GUIDE = join(ROOT, 'docs', 'using-the-modules.md');

/** What the package peers: one copy each, the host's, shared with the modules. */
const FRAMEWORK = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/platform-express',
  '@nestjs/typeorm',
  'reflect-metadata',
  'rxjs',
  'typeorm',
];
/** What a host application has in its own package.json: Nest, TypeORM and the driver. */
const HOST_PACKAGES = [...FRAMEWORK, 'pg'];

/** The first TypeScript block of the guide: the whole host application it shows. */
async function guideExample(): Promise<string> {
  const guide = await readFile(GUIDE, 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(guide)?.[1];
  if (block === undefined) throw new Error(`No \`\`\`ts block in ${GUIDE}`);
  return block;
}

async function storedName(
  databaseUrl: string,
  id: bigint,
): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM plants WHERE id = $1::bigint',
      [id.toString()],
    );
    return rows[0]?.name;
  } finally {
    await client.end();
  }
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
    folder = await mkdtemp(join(tmpdir(), 'plant-store-host-'));
    await installPackedPackage(folder, await installedVersions(HOST_PACKAGES));
    await writeFile(join(folder, 'host.ts'), await guideExample());
    await compileTypeScript(folder, ['host.ts']);
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('exports the public surface by name, and nothing by path', async () => {
    const script = [
      "const surface = await import('plant-store');",
      'console.log(JSON.stringify(Object.keys(surface).sort()));',
      "await import('plant-store/dist/main.js').then(() => console.log('deep'), (e) => console.log(e.code));",
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
    // The others are optional, for plant-store/testing and plant-store/testcontainers.
    const optional = manifest.peerDependenciesMeta ?? {};
    expect(
      Object.keys(manifest.peerDependencies ?? {})
        .filter((name) => optional[name]?.optional !== true)
        .sort(),
    ).toEqual(FRAMEWORK);
    expect(
      Object.keys(manifest.dependencies ?? {}).filter((name) =>
        FRAMEWORK.includes(name),
      ),
    ).toEqual([]);
  });

  it("runs the guide's application: plants created with exact ids, its own route's body kept", async () => {
    const databaseUrl = await createScratchDatabase(
      inject('databaseUrl'),
      'package',
    );
    const port = await freePort();
    let output = '';
    const host = startNodeProcess({
      args: [join(folder, 'out', 'host.js')],
      cwd: folder,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: databaseUrl,
        PLANTS_TOKEN: TOKEN,
        PORT: String(port),
      },
      onOutput: (text: string) => (output += text),
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      await eventually(`the host listening on ${url}`, () =>
        send(`${url}/orders`).catch(() => undefined),
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; the host printed: ${output}`);
      });
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
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
    }
  }, 60_000);
});
