import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Test } from '@nestjs/testing';
import { type DestinationStream, pino } from 'pino';
import type { Options } from 'pino-http';
import { eventually } from '../../../test/support/poll.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { LoggingModule, loggerParams } from './logging.module.js';
import { RequestLog } from './request-log.js';

function optionsFor(env: Record<string, string>): {
  options: Options;
  stream: unknown;
} {
  const { pinoHttp } = loggerParams(validateEnvironment(env));
  return Array.isArray(pinoHttp)
    ? { options: pinoHttp[0] as Options, stream: pinoHttp[1] }
    : { options: pinoHttp as Options, stream: undefined };
}

describe('loggerParams', () => {
  it('writes JSON lines, without blocking, when asked or in production', () => {
    const environments: Record<string, string>[] = [
      { LOG_FORMAT: 'json' },
      { NODE_ENV: 'production' },
    ];
    for (const env of environments) {
      const { options, stream } = optionsFor(env);
      expect(options.transport).toBeUndefined();
      expect(stream).toBeDefined();
    }
  });

  it('prints human-readable lines when asked', () => {
    const { options, stream } = optionsFor({ LOG_FORMAT: 'pretty' });
    expect(options.transport).toMatchObject({ target: 'pino-pretty' });
    expect(stream).toBeUndefined();
  });

  it('logs a request by its id, method and path (no query, no header), and redacts credentials anywhere else', () => {
    const { options } = optionsFor({ LOG_FORMAT: 'json' });
    const lines: string[] = [];
    const logger = pino(options, {
      write: (line: string) => lines.push(line),
    });
    const request = {
      method: 'POST',
      url: '/plants?access_token=secret-in-query',
      headers: {
        authorization: 'Bearer secret-in-header',
        cookie: 'session=secret-in-cookie',
        'x-request-id': 'r1',
      },
    } as unknown as IncomingMessage;
    logger.info({ req: request }, 'a request');
    logger.info({ headers: request.headers }, 'its headers');
    logger.info(
      { authorization: 'Bearer secret-alone', token: 'secret-token' },
      'credentials',
    );

    const [requestLine, headersLine, credentialsLine] = lines.map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    );
    expect(requestLine.req).toEqual({
      id: 'r1',
      method: 'POST',
      path: '/plants',
    });
    expect(headersLine.headers).toMatchObject({
      authorization: '[redacted]',
      cookie: '[redacted]',
    });
    expect(credentialsLine).toMatchObject({
      authorization: '[redacted]',
      token: '[redacted]',
    });
    expect(lines.join('')).not.toMatch(/secret/);
  });

  it('maps the service log levels onto pino levels', () => {
    expect(
      optionsFor({ LOG_FORMAT: 'json', LOG_LEVEL: 'log' }).options.level,
    ).toBe('info');
    expect(
      optionsFor({ LOG_FORMAT: 'json', LOG_LEVEL: 'verbose' }).options.level,
    ).toBe('trace');
  });
});

describe('loggerParams: where the lines go', () => {
  let tty: PropertyDescriptor | undefined;
  beforeEach(() => {
    tty = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
  });
  afterEach(() => {
    if (tty === undefined) delete (process.stdout as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(process.stdout, 'isTTY', tty);
  });
  const onTerminal = (isTTY: boolean) =>
    Object.defineProperty(process.stdout, 'isTTY', {
      value: isTTY,
      configurable: true,
    });
  const isPretty = (env: Record<string, string>) =>
    optionsFor(env).options.transport !== undefined;

  it('prints human-readable lines on a terminal outside production, unless JSON is asked for', () => {
    onTerminal(true);
    expect(isPretty({ NODE_ENV: 'development' })).toBe(true);
    expect(isPretty({ NODE_ENV: 'test', LOG_FORMAT: 'auto' })).toBe(true);
    expect(isPretty({ NODE_ENV: 'production' })).toBe(false);
    expect(isPretty({ NODE_ENV: 'development', LOG_FORMAT: 'json' })).toBe(
      false,
    );
  });

  it('writes JSON lines anywhere but a terminal, unless human-readable lines are asked for', () => {
    onTerminal(false);
    expect(isPretty({ NODE_ENV: 'development' })).toBe(false);
    expect(isPretty({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' })).toBe(
      true,
    );
  });

  it('prints pretty lines on one line with the time of day', () => {
    expect(optionsFor({ LOG_FORMAT: 'pretty' }).options.transport).toEqual({
      target: 'pino-pretty',
      options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' },
    });
  });

  describe('JSON lines on standard output', () => {
    /** What went to file descriptor 1, write by write (an empty stream's periodic flush writes 0 bytes: not counted). */
    let written: unknown[];
    beforeEach(() => {
      written = [];
      const write = fs.write.bind(fs);
      vi.spyOn(fs, 'write').mockImplementation(((
        fd: number,
        buffer: Buffer,
        ...rest: unknown[]
      ) => {
        if (fd !== 1)
          return (write as (...args: unknown[]) => void)(fd, buffer, ...rest);
        if (buffer.length > 0) written.push(buffer);
        const done = rest.at(-1) as (error: null, bytes: number) => void;
        process.nextTick(done, null, buffer.length);
      }) as typeof fs.write);
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    const jsonLogger = () => {
      const { options, stream } = optionsFor({ LOG_FORMAT: 'json' });
      return pino(options, stream as DestinationStream);
    };

    it('holds a quiet line back, then writes it as bytes on the periodic flush', async () => {
      const logger = jsonLogger();
      logger.info('a quiet line');
      expect(written).toEqual([]);
      await eventually('the flush', () =>
        written.length > 0 ? true : undefined,
      );
      expect(Buffer.isBuffer(written[0])).toBe(true);
      expect(JSON.parse(String(written[0]))).toMatchObject({
        level: 30,
        msg: 'a quiet line',
      });
    });

    it('writes as soon as a batch reaches 8 kB, in one write', () => {
      const logger = jsonLogger();
      const filler = 'x'.repeat(500);
      let lines = 0;
      while (written.length === 0 && lines < 100) {
        logger.info(filler);
        lines += 1;
      }
      expect(written).toHaveLength(1);
      const batch = String(written[0]).trimEnd().split('\n');
      expect(batch).toHaveLength(lines);
      expect(
        batch.map((line) => (JSON.parse(line) as { msg: string }).msg),
      ).toEqual(Array.from({ length: lines }, () => filler));
      // Written by the line that took it to 8192 bytes, not before.
      const bytes = (written[0] as Buffer).length;
      const last = Buffer.byteLength(batch[batch.length - 1]) + 1;
      expect(bytes).toBeGreaterThanOrEqual(8192);
      expect(bytes - last).toBeLessThan(8192);
    });
  });
});

/** The class of pino's destinations (pino.destination makes one): its instances are EventEmitters. */
const SonicBoom = createRequire(import.meta.url)('sonic-boom') as {
  prototype: { on(...args: unknown[]): unknown };
};

describe('loggerParams: standard output at exit', () => {
  /**
   * What pino calls at exit on the JSON lines' destination (its flushSync), caught as the
   * destination is made: it subscribes to its own events then.
   */
  let flushAtExit: () => void;
  /** Why a synchronous write to standard output fails, if it does. */
  let failure: string | undefined;
  beforeEach(() => {
    failure = undefined;
    // A spy calls through: the destination subscribes as usual, and its first call's `this` is it.
    const subscribed = vi.spyOn(SonicBoom.prototype, 'on');
    flushAtExit = () =>
      (subscribed.mock.contexts[0] as { flushSync(): void }).flushSync();
    const writeSync = fs.writeSync.bind(fs);
    vi.spyOn(fs, 'writeSync').mockImplementation(((
      fd: number,
      ...rest: unknown[]
    ) => {
      if (fd !== 1)
        return (writeSync as (...args: unknown[]) => number)(fd, ...rest);
      if (failure !== undefined)
        throw Object.assign(new Error(failure), { code: failure });
      return (rest[0] as Buffer).length;
    }) as typeof fs.writeSync);
  });
  afterEach(() => {
    // What a failed flush left held goes to the stand-in, not to the terminal.
    failure = undefined;
    flushAtExit();
    vi.restoreAllMocks();
  });

  const withALineHeld = () => {
    const { stream } = optionsFor({ LOG_FORMAT: 'json' });
    (stream as DestinationStream).write('{"msg":"held"}\n');
  };

  it('loses what is held when nobody reads standard output any more (EPIPE), rather than fail the exit', () => {
    withALineHeld();
    failure = 'EPIPE';
    expect(() => flushAtExit()).not.toThrow();
  });

  it('lets any other failure of the exit flush through', () => {
    withALineHeld();
    failure = 'EIO';
    expect(() => flushAtExit()).toThrow(
      expect.objectContaining({ code: 'EIO' }),
    );
  });

  it('writes what is held at exit', () => {
    const written: string[] = [];
    vi.mocked(fs.writeSync).mockImplementation(((fd: number, data: Buffer) => {
      written.push(`${fd}: ${String(data)}`);
      return data.length;
    }) as typeof fs.writeSync);
    withALineHeld();
    flushAtExit();
    expect(written).toEqual(['1: {"msg":"held"}\n']);
  });
});

describe('loggerParams: what a line holds', () => {
  const linesOf = (env: Record<string, string>) => {
    const { options } = optionsFor({ LOG_FORMAT: 'json', ...env });
    const lines: Record<string, unknown>[] = [];
    const logger = pino(options, {
      write: (line: string) =>
        lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    return { logger, lines };
  };

  it('maps every service log level onto its pino level', () => {
    expect(
      ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'].map(
        (level) =>
          optionsFor({ LOG_FORMAT: 'json', LOG_LEVEL: level }).options.level,
      ),
    ).toEqual(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
  });

  it('logs an answer by its status alone, and redacts a set-cookie header', () => {
    const { logger, lines } = linesOf({});
    const response = {
      statusCode: 201,
      getHeaders: () => ({ 'set-cookie': 'session=secret' }),
    } as unknown as ServerResponse;
    logger.info({ res: response }, 'an answer');
    logger.info({ headers: { 'set-cookie': 'session=secret' } }, 'headers');
    expect(lines.map(({ res, headers }) => ({ res, headers }))).toEqual([
      { res: { statusCode: 201 }, headers: undefined },
      { res: undefined, headers: { 'set-cookie': '[redacted]' } },
    ]);
  });

  it('logs a request without a path as an empty one', () => {
    const { logger, lines } = linesOf({});
    logger.info({
      req: { method: 'GET', headers: { 'x-request-id': 'r2' } },
    });
    expect(lines[0].req).toEqual({ id: 'r2', method: 'GET', path: '' });
  });
});

describe('LoggingModule', () => {
  it('gives the request log a logger from the environment', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        AppConfigModule.forRoot(validateEnvironment({ LOG_FORMAT: 'json' })),
        LoggingModule,
      ],
    }).compile();
    expect(moduleRef.get(RequestLog)).toBeInstanceOf(RequestLog);
    await moduleRef.close();
  });
});
