/** What main.ts did, in order. */
const steps = vi.hoisted(() => [] as string[]);

vi.mock('./node-version.js', () => ({
  refuseUnsupportedNode: () => steps.push('Node version checked'),
}));
vi.mock('./v8-flags.js', () => ({
  runWithServiceV8Flags: () => steps.push('V8 flags given'),
}));
vi.mock('./tracing/start-tracing.js', () => ({
  startTracing: async (env: NodeJS.ProcessEnv) => {
    steps.push(
      `tracing starting, ${env === process.env ? 'on the process environment' : 'on another'}`,
    );
    // A start that takes a while: what comes next waits for it.
    await new Promise((resolve) => setImmediate(resolve));
    steps.push('tracing started');
  },
}));
vi.mock('./bootstrap.js', () => ({
  startService: () => steps.push('service started'),
}));

describe('main: the entry point', () => {
  it('checks the Node version, then the V8 flags, starts tracing on the environment before it loads the service, then starts it', async () => {
    await import('./main.js');
    expect(steps).toEqual([
      'Node version checked',
      'V8 flags given',
      'tracing starting, on the process environment',
      'tracing started',
      'service started',
    ]);
  });
});
