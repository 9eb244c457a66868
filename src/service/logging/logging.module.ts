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

/**
 * Standard output for JSON lines: pino's destination (sonic-boom), without blocking, in its
 * buffer mode, each line handed over as its UTF-8 bytes. In its text mode sonic-boom
 * appends each line to the pending batch with `+=` and then measures the batch with
 * `Buffer.byteLength`, which copies all of it into one flat string, line after line: 4 kB
 * allocated per request at 8 KB batches, the largest single site of a create's 60 kB
 * (bench/RESULTS.md, issue 23). In buffer mode it lists the lines and joins them once per
 * write.
 */
function jsonLinesToStdout(): DestinationStream {
  const stdout = destination({
    dest: 1,
    sync: false,
    minLength: LOG_WRITE_BATCH_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
    contentMode: 'buffer',
  });
  // pino flushes what is queued when the process exits. With nobody left to read standard
  // output (the process that started the service killed) that write fails with EPIPE:
  // sonic-boom 4 retried it every 100 ms for ever, and the service never exited (hence
  // the override to sonic-boom 5 in package.json, which throws). The lines are lost either
  // way; the exit must not be.
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
      // What a request or an answer is in any log line: never its headers. The serializers
      // read the raw objects: pino-http (which builds nestjs-pino's root logger) would
      // otherwise first copy each into pino's standard shape, every response header included.
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
  // JSON lines go out without blocking the event loop, gathered into writes of at least
  // LOG_WRITE_BATCH_BYTES (a write per line cost 4% of the CPU under load: bench/RESULTS.md)
  // and flushed at least every LOG_FLUSH_INTERVAL_MS when traffic is light; pino flushes
  // what is queued when the process exits.
  return pretty
    ? params
    : {
        ...params,
        pinoHttp: [params.pinoHttp as Options, jsonLinesToStdout()],
      };
}

/**
 * The service's logger, made before the application on the same settings: bootstrap.ts
 * installs it first, so that every line is written by it, those of a start that fails
 * before the application's own logger exists included (Nest's console format is not JSON).
 */
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
