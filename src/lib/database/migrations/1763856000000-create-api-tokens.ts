import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaQualified } from '../schema-qualified.js';

export class CreateApiTokens1763856000000 implements MigrationInterface {
  name = 'CreateApiTokens1763856000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const tokens = schemaQualified(queryRunner.connection, 'api_tokens');
    // Only the SHA-256 of a token is stored; the token itself is shown once, at creation.
    await queryRunner.query(`
      CREATE TABLE ${tokens} (
        name       text        PRIMARY KEY,
        token_hash bytea       NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const tokens = schemaQualified(queryRunner.connection, 'api_tokens');
    await queryRunner.query(`DROP TABLE ${tokens}`);
  }
}
