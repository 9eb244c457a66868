import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { e2eProject, reliabilityProjects } from '../support/vitest-projects.js';

/** What the suite's project definitions refuse at config time, and how capacity runs. */
describe('the test projects (test/support/vitest-projects.ts)', () => {
  const OVERLOAD = 'test/reliability/overload.reliability-spec.ts';
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'plant-store-projects-'));
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('run the capacity scenarios in a later group, one file at a time, and leave them out of reliability', () => {
    const [reliability, capacity] = reliabilityProjects(
      ['test/reliability/**/*.reliability-spec.ts'],
      [OVERLOAD],
    );
    expect(reliability.test).toMatchObject({ name: 'reliability' });
    expect(reliability.test?.exclude).toContain(OVERLOAD);
    expect(reliability.test?.sequence?.groupOrder).toBeUndefined();
    expect(capacity.test).toMatchObject({
      name: 'capacity',
      include: [OVERLOAD],
      fileParallelism: false,
      sequence: { groupOrder: 1 },
    });
  });

  it('refuse a capacity scenario that is not there, naming it', () => {
    const renamed = 'test/reliability/overloaded.reliability-spec.ts';
    expect(() =>
      reliabilityProjects(
        ['test/reliability/**/*.reliability-spec.ts'],
        [OVERLOAD, renamed],
      ),
    ).toThrow(`${renamed}: no such file`);
  });

  it('refuse, in a one-graph project, a spec that replaces a module, naming it', async () => {
    const spec = join(folder, 'replacing.e2e-spec.ts');
    // Written in two parts: this file's own text must not read as replacing a module.
    await writeFile(spec, `vi.${'mock'}('../src/lib/index.js');\n`);
    await writeFile(
      join(folder, 'plain.e2e-spec.ts'),
      "it('runs', () => {});\n",
    );
    expect(() => e2eProject([join(folder, '*.e2e-spec.ts')])).toThrow(
      `${spec} replace a module (vi.mock): the e2e project runs its specs in one module graph`,
    );
    expect(() => e2eProject([join(folder, 'plain.e2e-spec.ts')])).not.toThrow();
  });
});
