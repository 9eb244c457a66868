import { sqlMigration } from './sql-migration.js';

export const CreateApiTokens1763856000000 = sqlMigration(
  'CreateApiTokens1763856000000',
  { tokens: 'api_tokens' },
  {
    // Only the SHA-256 of a token is stored; the token itself is shown once, at creation.
    up: ({ tokens }) => [
      `
      CREATE TABLE ${tokens} (
        name       text        PRIMARY KEY,
        token_hash bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz
      )
    `,
    ],
    down: ({ tokens }) => [`DROP TABLE ${tokens}`],
  },
);
