import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule, type Params } from 'nestjs-pino';
import { destination } from 'pino';
import type { Options } from 'pino-http';
import { Environment } from '../config/environment.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../http/request-id.js';
import { routeLabel } from '../http/route-label.js';

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

// Wherever a header object may be logged, its credentials are not.
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
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

export function loggerParams(env: Environment): Params {
  const pretty = wantsPrettyOutput(env);
  const params: Params = {
    pinoHttp: {
      level: PINO_LEVELS[env.LOG_LEVEL],
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      genReqId: (request: IncomingMessage, response: ServerResponse) => {
        const id = requestIdOf(request);
        response.setHeader(REQUEST_ID_HEADER, id);
        return id;
      },
      // The serializers below read the raw request and response: pino-http's wrappers
      // would first build pino's standard request and response objects for them to read
      // three fields from, copying every response header per request (bench/RESULTS.md).
      wrapSerializers: false,
      serializers: {
        req: (request: IncomingMessage & { id?: string }) => ({
          id: request.id,
          method: request.method,
          path: pathOf(request.url),
        }),
        res: (response: ServerResponse) => ({
          statusCode: response.statusCode,
        }),
      },
      // One line per request: its route template (not the raw path) once Express matched it.
      customSuccessObject: (
        request,
        _response,
        line: Record<string, unknown>,
      ) => ({
        ...line,
        route: routeLabel(request),
      }),
      // pino-http adds a made-up "failed with status code" error to these lines; the real
      // one, with its stack, is logged once by the exception filter.
      customErrorObject: (
        request,
        _response,
        _error,
        { err: _madeUp, ...line }: Record<string, unknown>,
      ) => ({
        ...line,
        route: routeLabel(request),
      }),
      // A 503 is the database being away, answered as designed: a warning, not an error.
      customLogLevel: (_request, response, error) => {
        if (error !== undefined || response.statusCode === 500) return 'error';
        return response.statusCode >= 500 ? 'warn' : 'info';
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
        pinoHttp: [
          params.pinoHttp as Options,
          destination({
            dest: 1,
            sync: false,
            minLength: LOG_WRITE_BATCH_BYTES,
            periodicFlush: LOG_FLUSH_INTERVAL_MS,
          }),
        ],
      };
}

@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [Environment],
      useFactory: loggerParams,
    }),
  ],
})
export class LoggingModule {}
