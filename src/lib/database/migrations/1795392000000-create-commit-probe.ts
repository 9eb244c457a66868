import { tableMigration } from './sql-migration.js';

/** One row, rewritten by WriteCircuit's probe: a commit that writes WAL waits for a synchronous standby. */
export const CreateCommitProbe1795392000000 = tableMigration(
  'CreateCommitProbe1795392000000',
  'commit_probe',
  [
    'id         smallint    PRIMARY KEY CHECK (id = 1)',
    'checked_at timestamptz NOT NULL',
  ],
);
