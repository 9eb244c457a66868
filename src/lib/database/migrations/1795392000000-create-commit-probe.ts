import { sqlMigration } from './sql-migration.js';

export const CreateCommitProbe1795392000000 = sqlMigration(
  'CreateCommitProbe1795392000000',
  { probe: 'commit_probe' },
  {
    // One row, rewritten by WriteCircuit's probe: a commit that writes WAL waits for a synchronous standby.
    up: ({ probe }) => [
      `
      CREATE TABLE ${probe} (
        id         smallint    PRIMARY KEY CHECK (id = 1),
        checked_at timestamptz NOT NULL
      )
    `,
    ],
    down: ({ probe }) => [`DROP TABLE ${probe}`],
  },
);
