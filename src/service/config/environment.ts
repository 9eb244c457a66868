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

const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

/** The HTTP adapters the service runs on: Express, the design's, by default. */
export const HTTP_ADAPTERS = ['express', 'fastify'] as const;
export type HttpAdapterName = (typeof HTTP_ADAPTERS)[number];

/** Every setting the service reads, with its default and rule; docs/configuration.md mirrors it. */
export class Environment {
  @IsIn(NODE_ENVS, { message: `must be one of ${NODE_ENVS.join(', ')}` })
  NODE_ENV: (typeof NODE_ENVS)[number] = 'development';

  @IsIntegerBetween(0, 65535)
  PORT: number = 3000;

  @IsString()
  HOST: string = '0.0.0.0';

  /** Worker processes sharing the port (node:cluster), for hosts with more cores. */
  @IsIntegerBetween(1, 64)
  WEB_CONCURRENCY: number = 1;

  /** Unset: the service starts an embedded PostgreSQL under DATA_DIR. */
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'must be a postgres:// or postgresql:// connection URL',
  })
  DATABASE_URL?: string = undefined;

  /** Comma-separated bearer tokens accepted by the service. */
  @Transform(splitList)
  @IsString({ each: true })
  @Matches(BEARER_TOKEN_FORMAT, {
    each: true,
    message:
      'must be a comma-separated list of tokens of at least 16 printable ASCII characters',
  })
  API_TOKENS: string[] = [];

  /** Largest accepted request body, in bytes or with a unit: 16kb, 1mb. */
  @Matches(BODY_LIMIT_FORMAT, {
    message: 'must be a size such as 16384, 16kb or 1mb',
  })
  BODY_LIMIT: string = PLANTS_DEFAULTS.bodyLimit;

  /** Where the embedded database and the development token live. */
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

  /** The whole database part of one request (pool wait, statements, retries); past it, 503. */
  @IsIntegerBetween(100, 600_000, 'milliseconds')
  DATABASE_REQUEST_TIMEOUT_MS: number =
    PLANTS_DEFAULTS.databaseRequestTimeoutMs;

  /** Rows waiting in the insert queue for a statement slot; past it, new creates get 503. */
  @IsIntegerBetween(1, 100_000)
  INSERT_QUEUE_LIMIT: number = PLANTS_DEFAULTS.insertQueueLimit;

  /** Longest a row waits in the insert queue; past it, 503 (never written). */
  @IsIntegerBetween(1, 600_000, 'milliseconds')
  INSERT_QUEUE_WAIT_MS: number = PLANTS_DEFAULTS.insertQueueWaitMs;

  /** Creates worked on at once; more wait (docs/performance.md#creates-worked-on-at-once). */
  @IsIntegerBetween(1, 100_000)
  CREATE_CONCURRENCY_LIMIT: number = 64;

  /** Creates waiting, before any work, for a work slot; past it, 503 before any work. */
  @IsIntegerBetween(0, 100_000)
  CREATE_WAITING_LIMIT: number = 192;

  /** Longest a create waits for a work slot; past it, 503 (never written). */
  @IsIntegerBetween(1, 600_000, 'milliseconds')
  CREATE_WAITING_TIMEOUT_MS: number = 1_000;

  /**
   * Once creates are refused, how late the event loop may run before every create is
   * refused until it catches up; 0 turns it off (docs/performance.md#behind-refuse-every-create).
   */
  @IsIntegerBetween(0, 60_000, 'milliseconds')
  CREATE_EVENT_LOOP_DELAY_LIMIT_MS: number = 50;

  @IsIn(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'log';

  /** auto: human-readable on a terminal outside production, JSON lines otherwise. */
  @IsIn(LOG_FORMATS, { message: `must be one of ${LOG_FORMATS.join(', ')}` })
  LOG_FORMAT: (typeof LOG_FORMATS)[number] = 'auto';

  /** How long in-flight requests may take to finish after SIGTERM. */
  @IsIntegerBetween(0, 600_000, 'milliseconds')
  SHUTDOWN_TIMEOUT_MS: number = 10_000;

  /** After SIGTERM, how long readiness fails while the replica still serves (0 with a preStop pause). */
  @IsIntegerBetween(0, 600_000, 'milliseconds')
  SHUTDOWN_DELAY_MS: number = 5_000;

  /** Stop as on SIGTERM when standard input closes (plant-store/testing sets it). */
  @Transform(toBoolean)
  @IsBoolean({ message: 'must be true or false' })
  STOP_WHEN_STDIN_CLOSES: boolean = false;

  /** Reported by GET /health and /health/live; unset: a random UUID per process. */
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,128}$/, {
    message: 'must be 1 to 128 printable ASCII characters without spaces',
  })
  INSTANCE_ID?: string = undefined;

  /** A client must send all its headers within this time (slow-loris defence). */
  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_HEADERS_TIMEOUT_MS: number = 10_000;

  /** A client must send its whole request within this time. */
  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_REQUEST_TIMEOUT_MS: number = 30_000;

  /** Idle keep-alive connections live this long: longer than load balancers' 60 s. */
  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 65_000;

  /** Connections served at once; past it, 503 before any parsing (0: no cap). */
  @IsIntegerBetween(0, 1_000_000)
  HTTP_MAX_CONNECTIONS: number = 0;

  /** Connections the kernel queues for accept (capped by net.core.somaxconn). */
  @IsIntegerBetween(1, 65_535)
  HTTP_LISTEN_BACKLOG: number = 511;

  /** Nest's HTTP adapter: @nestjs/platform-express, or @nestjs/platform-fastify. */
  @IsIn(HTTP_ADAPTERS, {
    message: `must be one of ${HTTP_ADAPTERS.join(', ')}`,
  })
  HTTP_ADAPTER: HttpAdapterName = 'express';

  /** Origins allowed by CORS; empty: CORS off (no Access-Control-* headers). */
  @Transform(splitList)
  @IsString({ each: true })
  @Matches(/^(\*|https?:\/\/[^\s,/]+)$/, {
    each: true,
    message:
      'must be a comma-separated list of origins such as https://app.example.com, or *',
  })
  CORS_ORIGINS: string[] = [];

  @Transform(toBoolean)
  @IsBoolean({ message: 'must be true or false' })
  METRICS_ENABLED: boolean = true;

  /** Serve /metrics on this port instead of the API port (unset: the API port). */
  @IsOptional()
  @IsIntegerBetween(1, 65535)
  METRICS_PORT?: number = undefined;

  /** Most active managed tokens held in memory (docs/tokens.md); past it, looked up per request. */
  @IsIntegerBetween(1, 10_000_000)
  TOKEN_STORE_MAX_TOKENS: number = AUTH_DEFAULTS.tokenStoreMaxTokens;

  /** Longest managed tokens are answered from memory without database contact; past it, 503. */
  @IsIntegerBetween(1_000, 600_000, 'milliseconds')
  TOKEN_SYNC_MAX_STALENESS_MS: number = AUTH_DEFAULTS.tokenSyncMaxStalenessMs;

  /** A full reload of the active tokens this often: the backstop for a missed notification. */
  @IsIntegerBetween(1_000, 86_400_000, 'milliseconds')
  TOKEN_RELOAD_INTERVAL_MS: number = AUTH_DEFAULTS.tokenReloadIntervalMs;

  /** Past TOKEN_STORE_MAX_TOKENS: database look-ups of tokens not held, at most this many at once. */
  @IsIntegerBetween(1, 100)
  TOKEN_LOOKUP_CONCURRENCY: number = AUTH_DEFAULTS.tokenLookupConcurrency;

  /** Failed authentications allowed per client address and window before 429. */
  @IsIntegerBetween(1, 1_000_000)
  AUTH_FAILURE_LIMIT: number = AUTH_DEFAULTS.authFailureLimit;

  @IsIntegerBetween(1_000, 3_600_000, 'milliseconds')
  AUTH_FAILURE_WINDOW_MS: number = AUTH_DEFAULTS.authFailureWindowMs;

  /** Requests allowed per token and window; 0: no per-token limit. */
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
  // One name for the token store's full reload, as its metric has it (issue 45).
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
