import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  e2eProject,
  reliabilityProjects,
  unitProjects,
} from '../support/vitest-projects.js';

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

  it('run a unit spec that replaces a module or starts the OpenTelemetry SDK in a process of its own, the others in one graph', async () => {
    const [replacing, tracing, plain] = [
      'replacing.spec.ts',
      'tracing.spec.ts',
      'plain.spec.ts',
    ].map((name) => join(folder, name));
    // Written in parts: this file's own text must read as neither.
    await writeFile(replacing, `vi.${'doMock'}('./sdk.js');\n`);
    await writeFile(tracing, `startTracing${'Sdk'}(settings);\n`);
    await writeFile(plain, "it('runs', () => {});\n");
    const [unit, isolated] = unitProjects([join(folder, '*.spec.ts')]);
    expect(unit.test).toMatchObject({ name: 'unit', isolate: false });
    expect(unit.test?.exclude).toEqual(
      expect.arrayContaining([replacing, tracing]),
    );
    expect(unit.test?.exclude).not.toContain(plain);
    expect(isolated.test?.name).toBe('unit-isolated');
    expect(isolated.test?.isolate).toBeUndefined();
    expect(isolated.test?.include?.sort()).toEqual([replacing, tracing].sort());
  });
});
