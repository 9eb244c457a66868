import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { refuseUnsupportedNode, satisfiesEngines } from './node-version.js';

describe('satisfiesEngines, the check of package.json engines at start', () => {
  it.each([
    ['v24.11.0', true],
    ['v24.21.0', true],
    ['v24.11.5', true],
    ['v24.10.9', false],
    ['v20.20.2', false],
    ['v25.0.0', false],
  ])('^24.11.0 and %s: %s', (version, expected) => {
    expect(satisfiesEngines('^24.11.0', version)).toBe(expected);
  });

  it('does not judge a range written in another form', () => {
    expect(satisfiesEngines('>=18', 'v20.0.0')).toBe(true);
    // Only a whole caret range is judged, not one inside a longer one.
    expect(satisfiesEngines('^24.11.0 || ^26.0.0', 'v26.1.0')).toBe(true);
    expect(satisfiesEngines('>=1 ^24.11.0', 'v20.0.0')).toBe(true);
    // Nor a version not of Node's form.
    expect(satisfiesEngines('^24.11.0', 'unknown-20.0.0')).toBe(true);
  });

  it.each([
    // The range as package.json may hold it, with spaces around.
    [' ^24.11.0 ', 'v20.0.0', false],
    // Numbers of more than one digit, in the range and in the version.
    ['^24.11.10', 'v24.11.9', false],
    ['^24.11.9', 'v24.11.10', true],
    ['^24.9.0', 'v24.10.0', true],
    // A version without its v.
    ['^24.11.0', '20.0.0', false],
    ['^24.11.0', '24.11.0', true],
  ])('%s and %s: %s', (range, version, expected) => {
    expect(satisfiesEngines(range, version)).toBe(expected);
  });
});

describe('refuseUnsupportedNode: a Node outside engines stops the start', () => {
  const { engines } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    engines: { node: string };
  };
  const version = Object.getOwnPropertyDescriptor(process, 'version')!;
  let exit: ReturnType<typeof vi.fn>;
  let written: string[];

  function runOn(nodeVersion: string): void {
    Object.defineProperty(process, 'version', {
      ...version,
      value: nodeVersion,
    });
    try {
      refuseUnsupportedNode();
    } finally {
      Object.defineProperty(process, 'version', version);
    }
  }

  beforeEach(() => {
    written = [];
    exit = vi.fn();
    vi.spyOn(process, 'exit').mockImplementation(exit as never);
    vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      written.push(String(text));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it("says so in one fatal JSON line, as the service's own lines are written, and exits 1", () => {
    const before = Date.now();
    runOn('v20.20.2');
    expect(exit.mock.calls).toEqual([[1]]);
    expect(written).toHaveLength(1);
    expect(written[0].endsWith('}\n')).toBe(true);
    const line = JSON.parse(written[0]) as Record<string, unknown>;
    expect(line).toEqual({
      level: 60,
      time: expect.any(Number) as unknown,
      pid: process.pid,
      hostname: hostname(),
      context: 'PlantStore',
      msg: `Node.js v20.20.2 is not supported: Plant Store needs Node.js ${engines.node} (package.json engines; npm ci brings it: docs/runtime.md)`,
    });
    expect(line.time).toBeGreaterThanOrEqual(before);
  });

  it('lets a Node in range start, saying nothing', () => {
    runOn(`v${engines.node.slice(1)}`);
    expect(exit).not.toHaveBeenCalled();
    expect(written).toEqual([]);
  });
});
