import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import type { Options } from 'pino-http';
import { validateEnvironment } from '../config/environment.js';
import { loggerParams } from './logging.module.js';

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
