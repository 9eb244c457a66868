import { sqlMigration } from './sql-migration.js';

export const CreatePlants1763769600000 = sqlMigration(
  'CreatePlants1763769600000',
  { plants: 'plants' },
  {
    up: ({ plants }) => [
      `
      CREATE TABLE ${plants} (
        id         bigint      PRIMARY KEY,
        name       text        NOT NULL,
        tag        text,
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `,
    ],
    down: ({ plants }) => [`DROP TABLE ${plants}`],
  },
);
