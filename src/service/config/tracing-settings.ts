// OpenTelemetry's standard variables (opentelemetry.io sdk-environment-variables), read here
// so a bad value stops the start with its name, before the SDK loads.

const EXPORTERS = ['otlp', 'console', 'none'] as const;
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export type TracesExporter = Exclude<(typeof EXPORTERS)[number], 'none'>;
export type OtlpProtocol = (typeof PROTOCOLS)[number];
export type TracesSampler = (typeof SAMPLERS)[number];

export interface TracingSettings {
  serviceName: string;
  exporter: TracesExporter;
  protocol: OtlpProtocol;
  /** The traces URL, /v1/traces included. */
  endpoint: string;
  sampler: TracesSampler;
  /** The ratio of the traceidratio samplers, 0 to 1. */
  samplerRatio: number;
}

export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';
const DEFAULT_SERVICE_NAME = 'plant-store';

/** Either settings to start an SDK with (undefined: tracing off), or what is wrong. */
export type TracingSettingsResult =
  | { settings: TracingSettings | undefined; problems?: undefined }
  | { settings?: undefined; problems: string[] };

type Env = Record<string, string | undefined>;

const valueOf = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

function oneOf<T extends string>(
  env: Env,
  name: string,
  allowed: readonly T[],
  problems: string[],
): T | undefined {
  const value = valueOf(env, name)?.toLowerCase();
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  problems.push(`${name} must be one of ${allowed.join(', ')}`);
  return undefined;
}

function httpUrl(env: Env, name: string, problems: string[]): URL | undefined {
  const value = valueOf(env, name);
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // Named below, like any other refused value.
  }
  problems.push(`${name} must be an http:// or https:// URL`);
  return undefined;
}

/** Tracing is on when an exporter or OTLP endpoint is set and OTEL_SDK_DISABLED is not true. */
export function readTracingSettings(env: Env): TracingSettingsResult {
  const problems: string[] = [];
  const disabled = oneOf(env, 'OTEL_SDK_DISABLED', ['true', 'false'], problems);
  const exporter = oneOf(env, 'OTEL_TRACES_EXPORTER', EXPORTERS, problems);
  const protocol =
    oneOf(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', PROTOCOLS, problems) ??
    oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', PROTOCOLS, problems);
  const tracesUrl = httpUrl(
    env,
    'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    problems,
  );
  const baseUrl = httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', problems);
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', SAMPLERS, problems);
  const ratioText = valueOf(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioText === undefined ? 1 : Number(ratioText);
  if (!(ratio >= 0 && ratio <= 1))
    problems.push('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1');
  if (problems.length > 0) return { problems };

  const wanted =
    exporter !== undefined || tracesUrl !== undefined || baseUrl !== undefined;
  if (disabled === 'true' || exporter === 'none' || !wanted)
    return { settings: undefined };
  const base = (baseUrl?.href ?? DEFAULT_OTLP_ENDPOINT).replace(/\/$/, '');
  return {
    settings: {
      serviceName: valueOf(env, 'OTEL_SERVICE_NAME') ?? DEFAULT_SERVICE_NAME,
      exporter: exporter ?? 'otlp',
      protocol: protocol ?? 'http/protobuf',
      endpoint: tracesUrl?.href ?? `${base}/v1/traces`,
      sampler: sampler ?? 'parentbased_always_on',
      samplerRatio: ratio,
    },
  };
}
