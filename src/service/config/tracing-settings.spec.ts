import { readTracingSettings } from './tracing-settings.js';

describe("readTracingSettings: OpenTelemetry's variables", () => {
  it.each([
    ['nothing is set', {}],
    [
      'no exporter or endpoint is set, whatever else is',
      { OTEL_SERVICE_NAME: 'shop', OTEL_TRACES_SAMPLER: 'always_on' },
    ],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none' }],
    [
      'OTEL_SDK_DISABLED=true',
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' },
    ],
  ])('leaves tracing off when %s', (_case, env) => {
    expect(readTracingSettings(env)).toEqual({ settings: undefined });
  });

  it("takes OpenTelemetry's defaults for what is unset", () => {
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({
      settings: {
        serviceName: 'plant-store',
        exporter: 'otlp',
        protocol: 'http/protobuf',
        endpoint: 'http://localhost:4318/v1/traces',
        sampler: 'parentbased_always_on',
        samplerRatio: 1,
      },
    });
  });

  it('turns on with an endpoint alone, appending /v1/traces to the base; a traces endpoint is taken as is', () => {
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        OTEL_SERVICE_NAME: 'plants-eu',
      }).settings,
    ).toEqual({
      serviceName: 'plants-eu',
      exporter: 'otlp',
      protocol: 'http/json',
      endpoint: 'https://collector:4318/v1/traces',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.01,
    });
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:9999/traces',
      }).settings?.endpoint,
    ).toBe('http://collector:9999/traces');
  });

  it('names every refused variable, never its value', () => {
    const { problems } = readTracingSettings({
      OTEL_TRACES_EXPORTER: 'jaeger',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
      OTEL_TRACES_SAMPLER: 'sometimes',
      OTEL_TRACES_SAMPLER_ARG: 'half',
      OTEL_SDK_DISABLED: 'yes',
    });
    expect(problems).toEqual([
      'OTEL_SDK_DISABLED must be one of true, false',
      'OTEL_TRACES_EXPORTER must be one of otlp, console, none',
      'OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
    ]);
  });

  it('reads each value trimmed and in any case, and an empty one as unset', () => {
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: '  OTLP ',
        OTEL_SERVICE_NAME: ' shop ',
        OTEL_TRACES_SAMPLER: 'AlWaYs_On',
      }).settings,
    ).toMatchObject({
      exporter: 'otlp',
      serviceName: 'shop',
      sampler: 'always_on',
    });
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: '   ',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
      }),
    ).toEqual({ settings: undefined });
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_SERVICE_NAME: ' ',
      }).settings?.serviceName,
    ).toBe('plant-store');
  });

  it('takes a sampler ratio from 0 to 1, both ends included', () => {
    const ratioOf = (arg: string) =>
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: arg,
      });
    expect(ratioOf('0').settings?.samplerRatio).toBe(0);
    expect(ratioOf('1').settings?.samplerRatio).toBe(1);
    expect(ratioOf(' 0.25 ').settings?.samplerRatio).toBe(0.25);
    for (const refused of ['-0.01', '1.01', 'NaN', 'Infinity'])
      expect(ratioOf(refused).problems).toEqual([
        'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1',
      ]);
  });

  it('prefers the traces protocol to the general one, and refuses a bad one of either', () => {
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      }).settings?.protocol,
    ).toBe('http/json');
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }).problems,
    ).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http/protobuf, http/json',
    ]);
  });

  it('keeps tracing on for OTEL_SDK_DISABLED=false', () => {
    expect(
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_SDK_DISABLED: 'false',
      }).settings?.exporter,
    ).toBe('console');
  });
});

describe('readTracingSettings: what turns tracing on', () => {
  it('turns on with a traces endpoint alone, taken as is', () => {
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector:4318/v1/spans',
      }),
    ).toEqual({
      settings: {
        serviceName: 'plant-store',
        exporter: 'otlp',
        protocol: 'http/protobuf',
        endpoint: 'https://collector:4318/v1/spans',
        sampler: 'parentbased_always_on',
        samplerRatio: 1,
      },
    });
  });
});
