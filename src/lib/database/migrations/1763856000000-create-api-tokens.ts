import { tableMigration } from './sql-migration.js';

/** Only the SHA-256 of a token is stored; the token itself is shown once, at creation. */
export const CreateApiTokens1763856000000 = tableMigration(
  'CreateApiTokens1763856000000',
  'api_tokens',
  [
    'name       text        PRIMARY KEY',
    'token_hash bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32)',
    'created_at timestamptz NOT NULL DEFAULT now()',
    'expires_at timestamptz',
    'revoked_at timestamptz',
  ],
);
