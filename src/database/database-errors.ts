// Node socket errors and pg's own messages when it cannot reach or lost the server.
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const CONNECTION_ERROR_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];
// SQLSTATE: class 08 connection exception; 57P01-57P03 server shutting down or starting;
// 53300 too many connections; 57014 statement timeout (the server is too slow to answer).
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300|57014)$/;

function describesUnavailable(error: Record<string, unknown>): boolean {
  const { code, message } = error;
  if (typeof code === 'string') {
    if (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code)) {
      return true;
    }
  }
  return (
    typeof message === 'string' &&
    CONNECTION_ERROR_MESSAGES.some((fragment) => message.includes(fragment))
  );
}

/**
 * True when an error means the database cannot be reached or cannot answer now, as
 * opposed to a fault in the request or the code. TypeORM wraps driver errors, so the
 * wrapped `driverError` is looked at too.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const record = error as Record<string, unknown>;
  return (
    describesUnavailable(record) ||
    (typeof record.driverError === 'object' &&
      record.driverError !== null &&
      describesUnavailable(record.driverError as Record<string, unknown>))
  );
}
