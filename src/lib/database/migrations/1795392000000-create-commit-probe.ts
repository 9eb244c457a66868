import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaQualified } from '../schema-qualified.js';

export class CreateCommitProbe1795392000000 implements MigrationInterface {
  name = 'CreateCommitProbe1795392000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const probe = schemaQualified(queryRunner.connection, 'commit_probe');
    // One row, rewritten by WriteCircuit's probe: a commit that writes WAL waits for a synchronous standby.
    await queryRunner.query(`
      CREATE TABLE ${probe} (
        id         smallint    PRIMARY KEY CHECK (id = 1),
        checked_at timestamptz NOT NULL
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const probe = schemaQualified(queryRunner.connection, 'commit_probe');
    await queryRunner.query(`DROP TABLE ${probe}`);
  }
}
