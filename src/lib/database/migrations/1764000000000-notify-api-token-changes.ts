import { sqlMigration } from './sql-migration.js';

/** A committed change to api_tokens notifies the token stores with its name (empty: reload all). */
export const NotifyApiTokenChanges1764000000000 = sqlMigration(
  'NotifyApiTokenChanges1764000000000',
  { tokens: 'api_tokens', notify: 'api_tokens_notify_change' },
  {
    up: ({ tokens, notify }) => [
      `
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
    `,
      `
      CREATE TRIGGER api_tokens_notify_row_change
      AFTER INSERT OR UPDATE OR DELETE ON ${tokens}
      FOR EACH ROW EXECUTE FUNCTION ${notify}()
    `,
      `
      CREATE TRIGGER api_tokens_notify_truncate
      AFTER TRUNCATE ON ${tokens}
      FOR EACH STATEMENT EXECUTE FUNCTION ${notify}()
    `,
    ],
    down: ({ tokens, notify }) => [
      `DROP TRIGGER api_tokens_notify_truncate ON ${tokens}`,
      `DROP TRIGGER api_tokens_notify_row_change ON ${tokens}`,
      `DROP FUNCTION ${notify}()`,
    ],
  },
);
