import { startTracing, stopTracing, tracingStarted } from './start-tracing.js';

/** The SDK as a recorder (tracing-sdk.spec.ts runs the real one): what was started and stopped. */
const sdk = vi.hoisted(() => ({ started: [] as unknown[], stops: 0 }));
vi.mock('./tracing-sdk.js', () => ({
  startTracingSdk: (settings: unknown) => {
    sdk.started.push(settings);
    return () => {
      sdk.stops += 1;
      return Promise.resolve();
    };
  },
}));

describe('startTracing and stopTracing: the SDK started before the application, if asked', () => {
  beforeEach(() => {
    sdk.started = [];
    sdk.stops = 0;
  });

  it('starts nothing when no OTEL_* variable asks for tracing, and has nothing to stop', async () => {
    await startTracing({});
    await startTracing({ OTEL_TRACES_EXPORTER: 'none' });
    expect(tracingStarted()).toBe(false);
    await stopTracing();
    expect(sdk).toEqual({ started: [], stops: 0 });
  });

  it('starts the SDK with the settings the variables give, then stops it once', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_SERVICE_NAME: 'plant-store-unit',
    };
    await startTracing(env);
    expect(sdk.started).toEqual([
      expect.objectContaining({
        serviceName: 'plant-store-unit',
        endpoint: 'http://collector:4318/v1/traces',
      }),
    ]);
    expect(tracingStarted()).toBe(true);

    await stopTracing();
    expect(tracingStarted()).toBe(false);
    await stopTracing();
    expect(sdk.stops).toBe(1);
  });
});
