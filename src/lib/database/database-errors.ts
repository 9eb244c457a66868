interface ErrorSignature {
  codes: ReadonlySet<string>;
  sqlStates: RegExp;
  messages: readonly string[];
}

// Cannot reach or lost the server: socket errors, class 08, 57P01-57P03, 53300, 57014, and
// 25006 (a node just made standby behind an HA proxy, docs/ha-postgres.md).
const UNAVAILABLE: ErrorSignature = {
  codes: new Set([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'ENOTFOUND',
    'EAI_AGAIN',
  ]),
  sqlStates: /^(08...|57P0[123]|53300|57014|25006)$/,
  messages: [
    'Connection terminated',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Client has encountered a connection error',
    'Connection ended unexpectedly',
  ],
};

// The subset that means a pooled connection died under the query (the server restarted,
// or an administrator ended the backend) while a new one may well work.
const LOST_CONNECTION: ErrorSignature = {
  codes: new Set(['ECONNRESET', 'EPIPE']),
  sqlStates: /^57P01$/,
  messages: [
    'Connection terminated unexpectedly',
    'Client has encountered a connection error',
    'Connection ended unexpectedly',
  ],
};

function matchesOne(
  error: Record<string, unknown>,
  signature: ErrorSignature,
): boolean {
  const { code, message } = error;
  if (
    typeof code === 'string' &&
    (signature.codes.has(code) || signature.sqlStates.test(code))
  ) {
    return true;
  }
  return (
    typeof message === 'string' &&
    signature.messages.some((fragment) => message.includes(fragment))
  );
}

// TypeORM wraps driver errors, so the wrapped `driverError` is looked at too.
function matches(error: unknown, signature: ErrorSignature): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const record = error as Record<string, unknown>;
  const { driverError } = record;
  return (
    matchesOne(record, signature) ||
    (typeof driverError === 'object' &&
      driverError !== null &&
      matchesOne(driverError as Record<string, unknown>, signature))
  );
}

/** The database part of a request ran past its deadline: the database is too slow now. */
export class DatabaseDeadlineError extends Error {
  override readonly name = 'DatabaseDeadlineError';

  constructor() {
    super('The database did not answer within the request deadline.');
  }
}

/** The database is known not to commit now (WriteCircuit): a write is refused at once. */
export class DatabaseDownError extends Error {
  override readonly name = 'DatabaseDownError';

  constructor() {
    super('The database does not accept commits now.');
  }
}

/** True when the database cannot be reached or answer now, not a fault of the request. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof DatabaseDeadlineError ||
    error instanceof DatabaseDownError ||
    matches(error, UNAVAILABLE)
  );
}

// Classes 22 and 23, and 54000: what the content of one row can cause.
const ONE_ROW: ErrorSignature = {
  codes: new Set(),
  sqlStates: /^(22...|23...|54000)$/,
  messages: [],
};

/** True when one row of a multi-row statement can be the cause, so the others may succeed alone. */
export function isCausedByOneRow(error: unknown): boolean {
  return matches(error, ONE_ROW);
}

/** True when a pooled connection was lost under a query: worth one retry on a fresh one. */
export function isLostConnection(error: unknown): boolean {
  return matches(error, LOST_CONNECTION);
}

// Enough for the pooled connections one sweep of terminations (a restart, a
// pg_terminate_backend of every backend) ends: each attempt takes the next one.
const LOST_CONNECTION_ATTEMPTS = 3;

/** `run`, up to three times while its pooled connection is lost: one loss does not mean down. */
export async function retryingLostConnection<T>(
  run: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= LOST_CONNECTION_ATTEMPTS || !isLostConnection(error))
        throw error;
    }
  }
}

// SQLSTATE 42P01 (undefined_table).
const MISSING_TABLE: ErrorSignature = {
  codes: new Set(),
  sqlStates: /^42P01$/,
  messages: [],
};

/** True when a statement named a table the database does not have (not migrated, wrong schema). */
export function isMissingTable(error: unknown): boolean {
  return matches(error, MISSING_TABLE);
}
