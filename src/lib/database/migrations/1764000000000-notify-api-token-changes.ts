import type { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaQualified } from '../schema-qualified.js';

/** The table and the trigger function, in the DataSource's schema. */
function objectsOf(queryRunner: QueryRunner) {
  return {
    tokens: schemaQualified(queryRunner.connection, 'api_tokens'),
    notify: schemaQualified(queryRunner.connection, 'api_tokens_notify_change'),
  };
}

/** A committed change to api_tokens notifies the token stores with its name (empty: reload all). */
export class NotifyApiTokenChanges1764000000000 implements MigrationInterface {
  name = 'NotifyApiTokenChanges1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const { tokens, notify } = objectsOf(queryRunner);
    await queryRunner.query(`
      CREATE FUNCTION ${notify}() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('api_tokens_changed', '');
          RETURN NULL;
        END IF;
        -- A notification carries at most 8000 bytes: a longer name asks for a resync.
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          PERFORM pg_notify('api_tokens_changed',
            CASE WHEN octet_length(OLD.name) <= 4000 THEN OLD.name ELSE '' END);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          PERFORM pg_notify('api_tokens_changed',
            CASE WHEN octet_length(NEW.name) <= 4000 THEN NEW.name ELSE '' END);
        END IF;
        RETURN NULL;
      END
      $$
    `);
    await queryRunner.query(`
      CREATE TRIGGER api_tokens_notify_row_change
      AFTER INSERT OR UPDATE OR DELETE ON ${tokens}
      FOR EACH ROW EXECUTE FUNCTION ${notify}()
    `);
    await queryRunner.query(`
      CREATE TRIGGER api_tokens_notify_truncate
      AFTER TRUNCATE ON ${tokens}
      FOR EACH STATEMENT EXECUTE FUNCTION ${notify}()
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const { tokens, notify } = objectsOf(queryRunner);
    await queryRunner.query(
      `DROP TRIGGER api_tokens_notify_truncate ON ${tokens}`,
    );
    await queryRunner.query(
      `DROP TRIGGER api_tokens_notify_row_change ON ${tokens}`,
    );
    await queryRunner.query(`DROP FUNCTION ${notify}()`);
  }
}
