import { tableMigration } from './sql-migration.js';

export const CreatePlants1763769600000 = tableMigration(
  'CreatePlants1763769600000',
  'plants',
  [
    'id         bigint      PRIMARY KEY',
    'name       text        NOT NULL',
    'tag        text',
    'created_at timestamptz NOT NULL DEFAULT now()',
  ],
);
