import {
  ConfigurationError,
  deprecatedSettingsIn,
  validateEnvironment,
} from './environment.js';

describe('validateEnvironment', () => {
  it('gives every setting its default when nothing is set', () => {
    // toEqual compares fields, not prototypes.
    expect(validateEnvironment({})).toEqual({
      NODE_ENV: 'development',
      PORT: 3000,
      HOST: '0.0.0.0',
      WEB_CONCURRENCY: 1,
      DATABASE_URL: undefined,
      API_TOKENS: [],
      BODY_LIMIT: '16kb',
      DATA_DIR: '.data',
      EMBEDDED_DATABASE_PORT: 15432,
      DATABASE_POOL_SIZE: 10,
      DATABASE_CONNECT_TIMEOUT_MS: 2000,
      DATABASE_QUERY_TIMEOUT_MS: 5000,
      DATABASE_REQUEST_TIMEOUT_MS: 2000,
      INSERT_QUEUE_LIMIT: 1000,
      INSERT_QUEUE_WAIT_MS: 1000,
      CREATE_CONCURRENCY_LIMIT: 64,
      CREATE_WAITING_LIMIT: 192,
      CREATE_WAITING_TIMEOUT_MS: 1000,
      CREATE_EVENT_LOOP_DELAY_LIMIT_MS: 50,
      LOG_LEVEL: 'log',
      LOG_FORMAT: 'auto',
      SHUTDOWN_TIMEOUT_MS: 10000,
      SHUTDOWN_DELAY_MS: 5000,
      STOP_WHEN_STDIN_CLOSES: false,
      INSTANCE_ID: undefined,
      HTTP_HEADERS_TIMEOUT_MS: 10000,
      HTTP_REQUEST_TIMEOUT_MS: 30000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65000,
      HTTP_MAX_CONNECTIONS: 0,
      HTTP_LISTEN_BACKLOG: 511,
      HTTP_ADAPTER: 'express',
      CORS_ORIGINS: [],
      METRICS_ENABLED: true,
      METRICS_PORT: undefined,
      TOKEN_STORE_MAX_TOKENS: 100000,
      TOKEN_SYNC_MAX_STALENESS_MS: 5000,
      TOKEN_RELOAD_INTERVAL_MS: 60000,
      TOKEN_LOOKUP_CONCURRENCY: 2,
      AUTH_FAILURE_LIMIT: 30,
      AUTH_FAILURE_WINDOW_MS: 60000,
      TOKEN_RATE_LIMIT: 0,
      TOKEN_RATE_WINDOW_MS: 60000,
    });
  });

  it('reads numbers as numbers and the token list as a list', () => {
    const env = validateEnvironment({
      PORT: '8080',
      EMBEDDED_DATABASE_PORT: '40000',
      DATABASE_POOL_SIZE: '4',
      API_TOKENS: ' first-token-0123456789 ,second-token-0123456789,,',
      DATABASE_URL: 'postgresql://user:pw@db:5432/plants',
    });
    expect(env.PORT).toBe(8080);
    expect(env.EMBEDDED_DATABASE_PORT).toBe(40000);
    expect(env.DATABASE_POOL_SIZE).toBe(4);
    expect(env.API_TOKENS).toEqual([
      'first-token-0123456789',
      'second-token-0123456789',
    ]);
    expect(env.DATABASE_URL).toBe('postgresql://user:pw@db:5432/plants');
  });

  it('reads booleans strictly and origins as a list', () => {
    expect(
      validateEnvironment({ METRICS_ENABLED: 'false' }).METRICS_ENABLED,
    ).toBe(false);
    expect(
      validateEnvironment({
        METRICS_ENABLED: 'true',
        STOP_WHEN_STDIN_CLOSES: 'true',
      }),
    ).toMatchObject({ METRICS_ENABLED: true, STOP_WHEN_STDIN_CLOSES: true });
    expect(
      validateEnvironment({
        CORS_ORIGINS: 'https://a.example, http://localhost:5173',
      }).CORS_ORIGINS,
    ).toEqual(['https://a.example', 'http://localhost:5173']);
  });

  it('treats an empty value as unset and ignores variables it does not know', () => {
    const env = validateEnvironment({
      PORT: '',
      DATABASE_URL: '',
      HOME: '/root',
    });
    expect(env.PORT).toBe(3000);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env).not.toHaveProperty('HOME');
  });

  it.each([
    ['PORT', 'eighty', 'PORT must be an integer from 0 to 65535'],
    ['PORT', '70000', 'PORT must be an integer from 0 to 65535'],
    [
      'DATABASE_QUERY_TIMEOUT_MS',
      '5s',
      'DATABASE_QUERY_TIMEOUT_MS must be an integer from 100 to 600000 (milliseconds)',
    ],
    [
      'BODY_LIMIT',
      '16 gigabytes',
      'BODY_LIMIT must be a size such as 16384, 16kb or 1mb',
    ],
    [
      'DATABASE_URL',
      'mysql://root:secret-pw@db/plants',
      'DATABASE_URL must be a postgres:// or postgresql:// connection URL',
    ],
    [
      'API_TOKENS',
      'short',
      'API_TOKENS must be a comma-separated list of tokens of at least 16 printable ASCII characters',
    ],
    [
      'LOG_LEVEL',
      'loud',
      'LOG_LEVEL must be one of fatal, error, warn, log, debug, verbose',
    ],
    [
      'NODE_ENV',
      'staging',
      'NODE_ENV must be one of development, production, test',
    ],
    ['HTTP_ADAPTER', 'koa', 'HTTP_ADAPTER must be one of express, fastify'],
    // Below the lower bound: the same sentence as above the upper one.
    [
      'EMBEDDED_DATABASE_PORT',
      '80',
      'EMBEDDED_DATABASE_PORT must be an integer from 1024 to 65535',
    ],
    [
      'STOP_WHEN_STDIN_CLOSES',
      'yes',
      'STOP_WHEN_STDIN_CLOSES must be true or false',
    ],
  ])(
    'names %s and its rule when it is invalid, never its value',
    (name, value, message) => {
      let thrown: unknown;
      try {
        validateEnvironment({ [name]: value });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigurationError);
      expect((thrown as Error).message).toBe(
        `Invalid configuration: ${message}.`,
      );
      expect((thrown as Error).message).not.toContain(value);
    },
  );

  it("names OpenTelemetry's variables alone when they alone are wrong, as a ConfigurationError", () => {
    let thrown: unknown;
    try {
      validateEnvironment({ OTEL_TRACES_SAMPLER_ARG: '2' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as Error).name).toBe('ConfigurationError');
    expect((thrown as Error).message).toBe(
      'Invalid configuration: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1.',
    );
  });

  it('lists every invalid variable at once', () => {
    expect(() => validateEnvironment({ PORT: 'x', LOG_LEVEL: 'y' })).toThrow(
      /^Invalid configuration: PORT .*; LOG_LEVEL .*\.$/,
    );
  });

  it("lists the service's invalid variables first, then OpenTelemetry's, in one sentence", () => {
    expect(() =>
      validateEnvironment({
        PORT: 'x',
        LOG_LEVEL: 'y',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }),
    ).toThrow(
      new ConfigurationError(
        'Invalid configuration: PORT must be an integer from 0 to 65535; LOG_LEVEL must be one of fatal, error, warn, log, debug, verbose; OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1.',
      ),
    );
  });

  describe('the former names (deprecated, still read)', () => {
    it.each([
      [
        'CREATE_QUEUE_LIMIT sets INSERT_QUEUE_LIMIT',
        { CREATE_QUEUE_LIMIT: '250' },
        { INSERT_QUEUE_LIMIT: 250 },
      ],
      [
        'CREATE_QUEUE_WAIT_MS sets both waits it governed: INSERT_QUEUE_WAIT_MS and CREATE_WAITING_TIMEOUT_MS',
        { CREATE_QUEUE_WAIT_MS: '60000' },
        { INSERT_QUEUE_WAIT_MS: 60000, CREATE_WAITING_TIMEOUT_MS: 60000 },
      ],
      [
        'TOKEN_RESYNC_INTERVAL_MS sets TOKEN_RELOAD_INTERVAL_MS',
        { TOKEN_RESYNC_INTERVAL_MS: '5000' },
        { TOKEN_RELOAD_INTERVAL_MS: 5000 },
      ],
      [
        // Empty counts as unset: the former name's value applies.
        'gives way to a current name that is set, not to one set empty',
        {
          CREATE_QUEUE_WAIT_MS: '60000',
          CREATE_WAITING_TIMEOUT_MS: '500',
          CREATE_QUEUE_LIMIT: '250',
          INSERT_QUEUE_LIMIT: '',
        },
        {
          INSERT_QUEUE_WAIT_MS: 60000,
          CREATE_WAITING_TIMEOUT_MS: 500,
          INSERT_QUEUE_LIMIT: 250,
        },
      ],
    ])('%s', (_rule, given, expected) => {
      const env = validateEnvironment(given);
      expect(env).toMatchObject(expected);
      expect(env).not.toHaveProperty('CREATE_QUEUE_LIMIT');
      expect(env).not.toHaveProperty('CREATE_QUEUE_WAIT_MS');
      expect(env).not.toHaveProperty('TOKEN_RESYNC_INTERVAL_MS');
    });

    it('names the former variable when its value is refused, never the value', () => {
      expect(() => validateEnvironment({ CREATE_QUEUE_LIMIT: 'lots' })).toThrow(
        'Invalid configuration: INSERT_QUEUE_LIMIT (set as CREATE_QUEUE_LIMIT) must be an integer from 1 to 100000.',
      );
    });

    it('warns once per former name set, naming what replaces it', () => {
      expect(deprecatedSettingsIn({})).toEqual([]);
      expect(
        deprecatedSettingsIn({
          CREATE_QUEUE_LIMIT: '250',
          CREATE_QUEUE_WAIT_MS: '',
        }),
      ).toEqual([
        'CREATE_QUEUE_LIMIT is deprecated: it sets INSERT_QUEUE_LIMIT where unset; use that name instead',
      ]);
      expect(deprecatedSettingsIn({ CREATE_QUEUE_WAIT_MS: '5' })).toEqual([
        'CREATE_QUEUE_WAIT_MS is deprecated: it sets INSERT_QUEUE_WAIT_MS and CREATE_WAITING_TIMEOUT_MS where unset; use those names instead',
      ]);
    });
  });
});
