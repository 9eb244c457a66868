import type { IncomingMessage } from 'node:http';
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

  it('logs the path without its query string, and redacts credentials', () => {
    const { options } = optionsFor({ LOG_FORMAT: 'json' });
    const request = {
      id: 'r1',
      method: 'POST',
      url: '/plants?access_token=secret',
    } as IncomingMessage;
    expect(options.serializers?.req(request)).toEqual({
      id: 'r1',
      method: 'POST',
      path: '/plants',
    });
    expect((options.redact as { paths: string[] }).paths).toContain(
      'req.headers.authorization',
    );
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
