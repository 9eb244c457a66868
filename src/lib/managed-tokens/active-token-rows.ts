import type { ActiveTokenRow } from './active-tokens.js';

/**
 * What makes a row of api_tokens active, in SQL: not revoked and not expired by the
 * database's clock. The one definition both readers use: the token store on its listening
 * connection and ApiTokensService through TypeORM. (`stateOf` says the same of a row already
 * read, at a time the caller gives, for listings.)
 */
export const ACTIVE_TOKEN = `revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`;

/** The active rows of `table` (schema-qualified), as the token store reads them. */
export const activeRowsOf = (table: string): string =>
  `SELECT name, token_hash, expires_at FROM ${table} WHERE ${ACTIVE_TOKEN}`;

/** A row as `activeRowsOf` returns it. */
export interface ActiveTokenColumns {
  name: string;
  token_hash: Buffer;
  expires_at: Date | null;
}

export const toActiveTokenRow = (row: ActiveTokenColumns): ActiveTokenRow => ({
  name: row.name,
  tokenHash: row.token_hash,
  expiresAt: row.expires_at,
});
