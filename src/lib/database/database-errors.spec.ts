import {
  DatabaseDeadlineError,
  DatabaseDownError,
  isCausedByOneRow,
  isDatabaseUnavailable,
  isLostConnection,
  isMissingTable,
  retryingLostConnection,
} from './database-errors.js';

const withCode = (code: string) =>
  Object.assign(new Error('driver text'), { code });
/** As TypeORM throws it: its own error, the driver's under driverError. */
const wrapping = (code: string) =>
  Object.assign(new Error('query failed'), { driverError: withCode(code) });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a reset connection', withCode('ECONNRESET')],
    ['an unknown host', withCode('ENOTFOUND')],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    [
      'a connection lost mid-query',
      new Error('Connection terminated unexpectedly'),
    ],
    ['a client-side query timeout', new Error('Query read timeout')],
    ['SQLSTATE 08006 (connection failure)', withCode('08006')],
    ['SQLSTATE 57P01 (admin shutdown)', withCode('57P01')],
    ['SQLSTATE 57P03 (cannot connect now)', withCode('57P03')],
    ['SQLSTATE 53300 (too many connections)', withCode('53300')],
    ['SQLSTATE 57014 (statement timeout)', withCode('57014')],
    ['SQLSTATE 25006 (a standby: read-only transaction)', withCode('25006')],
    ['a TypeORM error wrapping a lost connection', wrapping('57P01')],
  ])('is true for %s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a missing table (42P01)', withCode('42P01')],
    ['a unique violation (23505)', withCode('23505')],
    ['a bad encoding (22021)', withCode('22021')],
    ['a plain error', new Error('boom')],
    ['a wrapped syntax error', wrapping('42601')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
  ])('is false for %s', (_case, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isLostConnection', () => {
  it.each([
    ['a reset connection', withCode('ECONNRESET')],
    ['an administrator ending the backend (57P01)', withCode('57P01')],
    [
      'a connection lost mid-query',
      new Error('Connection terminated unexpectedly'),
    ],
    ['a wrapped lost connection', wrapping('57P01')],
  ])('is true for %s', (_case, error) => {
    expect(isLostConnection(error)).toBe(true);
  });

  it.each([
    [
      'a refused connection: the server is down, a retry would only wait',
      withCode('ECONNREFUSED'),
    ],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a statement timeout (57014)', withCode('57014')],
    ['a unique violation', withCode('23505')],
    ['nothing', undefined],
  ])('is false for %s', (_case, error) => {
    expect(isLostConnection(error)).toBe(false);
  });
});

describe('isCausedByOneRow', () => {
  it.each([
    ['a value too long (22001)', withCode('22001')],
    ['an untranslatable character (22P05)', withCode('22P05')],
    ['a null in a required column (23502)', withCode('23502')],
    ['a check violation (23514)', withCode('23514')],
    ['an index row too large (54000)', withCode('54000')],
    ['a TypeORM error wrapping a bad encoding', wrapping('22021')],
  ])('is true for %s', (_case, error) => {
    expect(isCausedByOneRow(error)).toBe(true);
  });

  it.each([
    ['a statement timeout (57014)', withCode('57014')],
    ['a deadlock (40P01)', withCode('40P01')],
    ['too many connections (53300)', withCode('53300')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['the request deadline', new DatabaseDeadlineError()],
    ['a missing table (42P01)', withCode('42P01')],
    ['a plain error', new Error('boom')],
  ])('is false for %s', (_case, error) => {
    expect(isCausedByOneRow(error)).toBe(false);
  });
});

describe('DatabaseDeadlineError', () => {
  it('counts as the database being unavailable, not as a lost connection', () => {
    expect(isDatabaseUnavailable(new DatabaseDeadlineError())).toBe(true);
    expect(isLostConnection(new DatabaseDeadlineError())).toBe(false);
  });
});

describe('the signatures, at their edges', () => {
  it.each(['EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])(
    'takes the socket error %s as the database unavailable',
    (code) => {
      expect(isDatabaseUnavailable(withCode(code))).toBe(true);
    },
  );

  it('takes a broken pipe as a lost connection, worth a retry', () => {
    expect(isLostConnection(withCode('EPIPE'))).toBe(true);
  });

  // A SQLSTATE is five characters: a code that only begins or ends like one is another.
  it.each(['080060', 'X08006', '57P010', 'X57P01'])(
    'does not take %j for a SQLSTATE it only contains',
    (code) => {
      expect(isDatabaseUnavailable(withCode(code))).toBe(false);
      expect(isLostConnection(withCode(code))).toBe(false);
    },
  );

  it.each(['220010', 'X22001', '540000', 'X54000'])(
    'does not take %j for a one-row SQLSTATE it only contains',
    (code) => {
      expect(isCausedByOneRow(withCode(code))).toBe(false);
    },
  );

  it('looks past a driverError that is null', () => {
    const error = Object.assign(new Error('query failed'), {
      driverError: null,
    });
    expect(isDatabaseUnavailable(error)).toBe(false);
    expect(isLostConnection(error)).toBe(false);
  });

  it('names its own errors as the logs show them, with no driver text', () => {
    expect(
      [new DatabaseDeadlineError(), new DatabaseDownError()].map(String),
    ).toEqual([
      'DatabaseDeadlineError: The database did not answer within the request deadline.',
      'DatabaseDownError: The database does not accept commits now.',
    ]);
  });
});

describe('isMissingTable', () => {
  it('is true for undefined_table, from the driver or wrapped by TypeORM, and for nothing else', () => {
    expect(isMissingTable({ code: '42P01' })).toBe(true);
    expect(isMissingTable({ driverError: { code: '42P01' } })).toBe(true);
    for (const other of [
      { code: '42P010' },
      { code: '42703' },
      { driverError: { code: '23505' } },
      null,
      'relation "api_tokens" does not exist',
    ])
      expect(isMissingTable(other)).toBe(false);
  });
});

describe('retryingLostConnection', () => {
  /** A run that fails with `failures` in turn, then answers 'stored'. */
  function runFailing(...failures: Error[]) {
    return vi.fn(async () => {
      const failure = failures.shift();
      if (failure !== undefined) throw failure;
      return 'stored';
    });
  }

  it('runs again on a fresh connection after one or two lost ones', async () => {
    const run = runFailing(withCode('57P01'), withCode('ECONNRESET'));
    await expect(retryingLostConnection(run)).resolves.toBe('stored');
    expect(run).toHaveBeenCalledTimes(3);
  });

  it('throws the third lost connection: three attempts in all', async () => {
    const third = withCode('57P01');
    const run = runFailing(withCode('57P01'), withCode('57P01'), third);
    await expect(retryingLostConnection(run)).rejects.toBe(third);
    expect(run).toHaveBeenCalledTimes(3);
  });

  it('throws any other failure at once', async () => {
    const refused = withCode('ECONNREFUSED');
    const run = runFailing(refused);
    await expect(retryingLostConnection(run)).rejects.toBe(refused);
    expect(run).toHaveBeenCalledTimes(1);
  });
});
