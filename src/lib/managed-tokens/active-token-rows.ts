import type { ActiveTokenRow } from './active-tokens.js';

/** An active api_tokens row, by the database's clock: the one definition the store and ApiTokensService use. */
export const ACTIVE_TOKEN = `revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`;

/** The active rows of `table` (schema-qualified), as the token store reads them. */
export const activeRowsOf = (table: string): string =>
  `SELECT name, token_hash, expires_at FROM ${table} WHERE ${ACTIVE_TOKEN}`;

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
