import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaQualified } from '../schema-qualified.js';

export class CreatePlants1763769600000 implements MigrationInterface {
  name = 'CreatePlants1763769600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const plants = schemaQualified(queryRunner.connection, 'plants');
    await queryRunner.query(`
      CREATE TABLE ${plants} (
        id         bigint      PRIMARY KEY,
        name       text        NOT NULL,
        tag        text,
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const plants = schemaQualified(queryRunner.connection, 'plants');
    await queryRunner.query(`DROP TABLE ${plants}`);
  }
}
