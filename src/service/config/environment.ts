import { applyDecorators, Inject } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  validateSync,
  ValidationError,
} from 'class-validator';
import {
  AUTH_DEFAULTS,
  BEARER_TOKEN_FORMAT,
  BODY_LIMIT_FORMAT,
  PLANTS_DEFAULTS,
} from '../../lib/index.js';
import { readTracingSettings } from './tracing-settings.js';

const NODE_ENVS = ['development', 'production', 'test'] as const;
const LOG_LEVELS = [
  'fatal',
  'error',
  'warn',
  'log',
  'debug',
  'verbose',
] as const;

/** One rule, one message: an integer in [min, max]. */
function IsIntegerBetween(
  min: number,
  max: number,
  unit?: string,
): PropertyDecorator {
  const message = `must be an integer from ${min} to ${max}${unit ? ` (${unit})` : ''}`;
  return applyDecorators(
    IsInt({ message }),
    Min(min, { message }),
    Max(max, { message }),
  );
}

/** One rule, one message: one of `values`. */
function IsOneOf(values: readonly string[]): PropertyDecorator {
  return IsIn(values, { message: `must be one of ${values.join(', ')}` });
}

const splitList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0)
    : value;

// Reads the raw text: implicit conversion would already have made "false" true.
const toBoolean = ({
  obj,
  key,
}: {
  obj: Record<string, unknown>;
  key: string;
}): unknown =>
  obj[key] === 'true' ? true : obj[key] === 'false' ? false : obj[key];

/** `true` or `false`, as written: any other text is refused, not read as truthy. */
function IsTrueOrFalse(): PropertyDecorator {
  return applyDecorators(
    Transform(toBoolean),
    IsBoolean({ message: 'must be true or false' }),
  );
}

/** A comma-separated list, each item matching `format`; blank items dropped. */
function IsListOf(format: RegExp, message: string): PropertyDecorator {
  return applyDecorators(
    Transform(splitList),
    IsString({ each: true }),
    Matches(format, { each: true, message }),
  );
}

const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

/** The HTTP adapters the service runs on: Express, the design's, by default. */
export const HTTP_ADAPTERS = ['express', 'fastify'] as const;
export type HttpAdapterName = (typeof HTTP_ADAPTERS)[number];

/** Every setting the service reads, with its default and rule; each is described in docs/configuration.md. */
export class Environment {
  @IsOneOf(NODE_ENVS)
  NODE_ENV: (typeof NODE_ENVS)[number] = 'development';

  @IsIntegerBetween(0, 65535)
  PORT: number = 3000;

  @IsString()
  HOST: string = '0.0.0.0';

  @IsIntegerBetween(1, 64)
  WEB_CONCURRENCY: number = 1;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'must be a postgres:// or postgresql:// connection URL',
  })
  DATABASE_URL?: string = undefined;

  @IsListOf(
    BEARER_TOKEN_FORMAT,
    'must be a comma-separated list of tokens of at least 16 printable ASCII characters',
  )
  API_TOKENS: string[] = [];

  @Matches(BODY_LIMIT_FORMAT, {
    message: 'must be a size such as 16384, 16kb or 1mb',
  })
  BODY_LIMIT: string = PLANTS_DEFAULTS.bodyLimit;

  @IsString()
  DATA_DIR: string = '.data';

  @IsIntegerBetween(1024, 65535)
  // Below Linux's ephemeral range (32768-60999), where an outgoing connection could hold it.
  EMBEDDED_DATABASE_PORT: number = 15432;

  @IsIntegerBetween(1, 100)
  DATABASE_POOL_SIZE: number = 10;

  @IsIntegerBetween(100, 60_000, 'milliseconds')
  DATABASE_CONNECT_TIMEOUT_MS: number = 2_000;

  @IsIntegerBetween(100, 600_000, 'milliseconds')
  DATABASE_QUERY_TIMEOUT_MS: number = 5_000;

  @IsIntegerBetween(100, 600_000, 'milliseconds')
  DATABASE_REQUEST_TIMEOUT_MS: number =
    PLANTS_DEFAULTS.databaseRequestTimeoutMs;

  @IsIntegerBetween(1, 100_000)
  INSERT_QUEUE_LIMIT: number = PLANTS_DEFAULTS.insertQueueLimit;

  @IsIntegerBetween(1, 600_000, 'milliseconds')
  INSERT_QUEUE_WAIT_MS: number = PLANTS_DEFAULTS.insertQueueWaitMs;

  @IsIntegerBetween(1, 100_000)
  CREATE_CONCURRENCY_LIMIT: number = 64;

  @IsIntegerBetween(0, 100_000)
  CREATE_WAITING_LIMIT: number = 192;

  @IsIntegerBetween(1, 600_000, 'milliseconds')
  CREATE_WAITING_TIMEOUT_MS: number = 1_000;

  @IsIntegerBetween(0, 60_000, 'milliseconds')
  CREATE_EVENT_LOOP_DELAY_LIMIT_MS: number = 50;

  @IsOneOf(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'log';

  @IsOneOf(LOG_FORMATS)
  LOG_FORMAT: (typeof LOG_FORMATS)[number] = 'auto';

  @IsIntegerBetween(0, 600_000, 'milliseconds')
  SHUTDOWN_TIMEOUT_MS: number = 10_000;

  @IsIntegerBetween(0, 600_000, 'milliseconds')
  SHUTDOWN_DELAY_MS: number = 5_000;

  @IsTrueOrFalse()
  STOP_WHEN_STDIN_CLOSES: boolean = false;

  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,128}$/, {
    message: 'must be 1 to 128 printable ASCII characters without spaces',
  })
  INSTANCE_ID?: string = undefined;

  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;

  @IsIntegerBetween(0, 1_000_000)
  HTTP_MAX_CONNECTIONS: number = 0;

  @IsIntegerBetween(1, 65_535)
  HTTP_LISTEN_BACKLOG: number = 511;

  @IsOneOf(HTTP_ADAPTERS)
  HTTP_ADAPTER: HttpAdapterName = 'express';

  @IsListOf(
    /^(\*|https?:\/\/[^\s,/]+)$/,
    'must be a comma-separated list of origins such as https://app.example.com, or *',
  )
  CORS_ORIGINS: string[] = [];

  @IsTrueOrFalse()
  METRICS_ENABLED: boolean = true;

  @IsOptional()
  @IsIntegerBetween(1, 65535)
  METRICS_PORT?: number = undefined;

  @IsIntegerBetween(1, 10_000_000)
  TOKEN_STORE_MAX_TOKENS: number = AUTH_DEFAULTS.tokenStoreMaxTokens;

  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  TOKEN_SYNC_MAX_STALENESS_MS: number = AUTH_DEFAULTS.tokenSyncMaxStalenessMs;

  @IsIntegerBetween(1_000, 86_400_000, 'milliseconds')
  TOKEN_RELOAD_INTERVAL_MS: number = AUTH_DEFAULTS.tokenReloadIntervalMs;

  @IsIntegerBetween(1, 100)
  TOKEN_LOOKUP_CONCURRENCY: number = AUTH_DEFAULTS.tokenLookupConcurrency;

  @IsIntegerBetween(1, 1_000_000)
  AUTH_FAILURE_LIMIT: number = AUTH_DEFAULTS.authFailureLimit;

  @IsIntegerBetween(1_000, 3_600_000, 'milliseconds')
  AUTH_FAILURE_WINDOW_MS: number = AUTH_DEFAULTS.authFailureWindowMs;

  @IsIntegerBetween(0, 1_000_000)
  TOKEN_RATE_LIMIT: number = AUTH_DEFAULTS.tokenRateLimit;

  @IsIntegerBetween(1_000, 3_600_000, 'milliseconds')
  TOKEN_RATE_WINDOW_MS: number = AUTH_DEFAULTS.tokenRateWindowMs;
}

/** Former names, still read: each sets what replaced it where unset. */
export const DEPRECATED_SETTINGS: Readonly<
  Record<string, readonly (keyof Environment)[]>
> = {
  CREATE_QUEUE_LIMIT: ['INSERT_QUEUE_LIMIT'],
  CREATE_QUEUE_WAIT_MS: ['INSERT_QUEUE_WAIT_MS', 'CREATE_WAITING_TIMEOUT_MS'],
  TOKEN_RESYNC_INTERVAL_MS: ['TOKEN_RELOAD_INTERVAL_MS'],
};

const isSet = (value: string | undefined): value is string =>
  value !== undefined && value !== '';

/** One warning per former name set in `env`, saying what to set instead. */
export function deprecatedSettingsIn(
  env: Record<string, string | undefined>,
): string[] {
  return Object.entries(DEPRECATED_SETTINGS)
    .filter(([former]) => isSet(env[former]))
    .map(
      ([former, current]) =>
        `${former} is deprecated: it sets ${current.join(' and ')} where unset; ` +
        `use ${current.length === 1 ? 'that name' : 'those names'} instead`,
    );
}

/** `env` with former names' values under their current names, where unset, and their origins. */
function withCurrentNames(env: Record<string, string | undefined>): {
  renamed: Record<string, string | undefined>;
  formerOf: Map<string, string>;
} {
  const renamed = { ...env };
  const formerOf = new Map<string, string>();
  for (const [former, current] of Object.entries(DEPRECATED_SETTINGS)) {
    if (!isSet(env[former])) continue;
    for (const name of current) {
      if (isSet(env[name])) continue;
      renamed[name] = env[former];
      formerOf.set(name, former);
    }
  }
  return { renamed, formerOf };
}

/** Raised at boot; its message names every offending variable and never its value. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

function describe(
  errors: ValidationError[],
  formerOf: Map<string, string>,
): string {
  return errors
    .map((error) => {
      const rules = Object.values(error.constraints ?? {});
      const former = formerOf.get(error.property);
      const name =
        former === undefined
          ? error.property
          : `${error.property} (set as ${former})`;
      return `${name} ${rules[0] ?? 'is invalid'}`;
    })
    .join('; ');
}

/** Reads and validates the settings once per process; empty values count as unset. */
export function validateEnvironment(
  env: Record<string, string | undefined>,
): Environment {
  const known = new Environment();
  const { renamed, formerOf } = withCurrentNames(env);
  const given = Object.fromEntries(
    Object.entries(renamed).filter(
      ([key, value]) => key in known && isSet(value),
    ),
  );
  const environment = plainToInstance(Environment, given, {
    enableImplicitConversion: true,
    exposeDefaultValues: true,
  });
  const errors = validateSync(environment, { forbidUnknownValues: true });
  // OpenTelemetry's variables keep their standard names (tracing-settings.ts).
  const tracing = readTracingSettings(env).problems ?? [];
  if (errors.length > 0 || tracing.length > 0) {
    const described = [
      ...(errors.length > 0 ? [describe(errors, formerOf)] : []),
      ...tracing,
    ];
    throw new ConfigurationError(
      `Invalid configuration: ${described.join('; ')}.`,
    );
  }
  return environment;
}

/** Injects the typed, validated Environment (provided by AppConfigModule.forRoot). */
export const InjectEnvironment = (): PropertyDecorator & ParameterDecorator =>
  Inject(Environment);
