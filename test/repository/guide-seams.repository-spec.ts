import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compileTypeScript,
  GUIDE,
  INSTALL_TIMEOUT_MS,
  installedVersions,
  installPackedPackage,
  run,
} from '../support/packed-package.js';

/** The guide's sections on extending the modules: from the imports to the Swagger document. */
const FIRST = 'The examples below';
const LAST = 'Your Swagger document';

/** What a team that extends the modules and tests its application has in its package.json. */
const HOST_PACKAGES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/event-emitter',
  '@nestjs/platform-express',
  '@nestjs/swagger',
  '@nestjs/testing',
  '@nestjs/typeorm',
  'class-validator',
  'pg',
  'reflect-metadata',
  'rxjs',
  'typeorm',
];

/** Every TypeScript block of the sections from FIRST to LAST, in the guide's order. */
async function seamBlocks(): Promise<string[]> {
  const guide = await readFile(GUIDE, 'utf8');
  const start = guide.indexOf(`\n## ${FIRST}\n`);
  const lastHeading = guide.indexOf(`\n## ${LAST}\n`);
  const end = guide.indexOf('\n## ', lastHeading + 1);
  if (start < 0 || lastHeading < 0 || end < 0)
    throw new Error(`No sections "${FIRST}" to "${LAST}" in ${GUIDE}`);
  return [...guide.slice(start, end).matchAll(/```ts\n([\s\S]*?)```/g)].map(
    (match) => match[1],
  );
}

describe("the guide's examples of extending the modules, from the packed package", () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'plant-store-seams-'));
    await installPackedPackage(folder, await installedVersions(HOST_PACKAGES));
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('compiles every block together, strict, and runs them: the create reaches the fake, the document requires bearerAuth', async () => {
    const blocks = await seamBlocks();
    // The imports, a named connection, a read route, a listener, a NewPlant, the test, Swagger.
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    await writeFile(join(folder, 'seams.ts'), blocks.join('\n'));
    await compileTypeScript(folder, ['seams.ts']);
    const { stdout } = await run(
      process.execPath,
      [join(folder, 'out', 'seams.js')],
      { cwd: folder, env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 },
    );
    expect(stdout).toContain('200 {"name":"Fern"}');
    expect(stdout).toContain('[ { bearerAuth: [] } ]');
  }, 120_000);
});
