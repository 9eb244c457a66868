import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LoggerService, Module } from '@nestjs/common';
import { Logger, LoggerModule, type Params, PinoLogger } from 'nestjs-pino';
import { type DestinationStream, destination } from 'pino';
import type { Options } from 'pino-http';
import { Environment } from '../config/environment.js';
import { requestIdOf } from '../../lib/index.js';
import { RequestLog } from './request-log.js';
import { tracingStarted } from '../tracing/start-tracing.js';
import { traceIdsOfActiveSpan } from '../tracing/log-trace-ids.js';

const PINO_LEVELS: Record<Environment['LOG_LEVEL'], string> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

// A log line is written at most this late, however quiet the service.
const LOG_FLUSH_INTERVAL_MS = 100;
// About twenty request lines per write(2) under load.
const LOG_WRITE_BATCH_BYTES = 8192;

// Wherever a header object may be logged, its credentials are not. A request or an answer
// logged as `req` or `res` goes through the serializers below, which write no headers.
const REDACTED_PATHS = [
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'authorization',
  'cookie',
  'token',
];

function prettyOutputAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/** Human-readable on a developer's terminal; JSON lines anywhere else. */
function wantsPrettyOutput(env: Environment): boolean {
  if (env.LOG_FORMAT === 'json') return false;
  const wanted =
    env.LOG_FORMAT === 'pretty' ||
    (process.stdout.isTTY === true && env.NODE_ENV !== 'production');
  return wanted && prettyOutputAvailable();
}

/** The path alone: a query string may carry anything, tokens included. */
function pathOf(url: string | undefined): string {
  return (url ?? '').split('?')[0];
}

/** Standard output for JSON lines: sonic-boom without blocking, in buffer mode (docs/performance.md#what-bought-the-most-and-where-it-is-measured). */
function jsonLinesToStdout(): DestinationStream {
  const stdout = destination({
    dest: 1,
    sync: false,
    minLength: LOG_WRITE_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
    contentMode: 'buffer',
  });
  // The exit flush fails with EPIPE once nobody reads standard output: lose the lines, not the exit (sonic-boom 5).
  const flushSync = stdout.flushSync.bind(stdout);
  stdout.flushSync = () => {
    try {
      flushSync();
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EPIPE') throw error;
    }
  };
  // sonic-boom's types know only its text mode's write(string). Looked up at each call:
  // pino replaces it with a no-op once standard output is a broken pipe.
  const bytes = stdout as unknown as { write(line: Buffer): boolean };
  return { write: (line: string) => bytes.write(Buffer.from(line)) };
}

export function loggerParams(env: Environment): Params {
  const pretty = wantsPrettyOutput(env);
  const params: Params = {
    // The request log is RequestLog's; pino-http's middleware is not mounted.
    forRoutes: [],
    pinoHttp: {
      level: PINO_LEVELS[env.LOG_LEVEL],
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Never headers; serializers read the raw objects, not pino-http's copied standard shape.
      wrapSerializers: false,
      // trace_id and span_id on every line written inside a span, while an SDK runs.
      ...(tracingStarted() ? { mixin: traceIdsOfActiveSpan } : {}),
      serializers: {
        req: (request: IncomingMessage) => ({
          id: requestIdOf(request),
          method: request.method,
          path: pathOf(request.url),
        }),
        res: (response: ServerResponse) => ({
          statusCode: response.statusCode,
        }),
      },
      ...(pretty
        ? {
            transport: {
              target: 'pino-pretty',
              options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
            },
          }
        : {}),
    },
  };
  // JSON lines in batched, non-blocking writes, flushed on a timer and at exit
  // (docs/performance.md#what-bought-the-most-and-where-it-is-measured).
  return pretty
    ? params
    : {
        ...params,
        pinoHttp: [params.pinoHttp as Options, jsonLinesToStdout()],
      };
}

/** The service's logger, installed first by bootstrap.ts so even a failed start logs JSON. */
export function createLogger(env: Environment): LoggerService {
  const params = loggerParams(env);
  return new Logger(new PinoLogger(params), params);
}

@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [Environment],
      useFactory: loggerParams,
    }),
  ],
  // Follows every request from the front door (front-door.ts).
  providers: [RequestLog],
})
export class LoggingModule {}
