import { createHash } from 'node:crypto';
import type { DataSource, QueryRunner } from 'typeorm';
import { MIGRATIONS } from './index.js';

/** Every statement a migration's up and down send, on a DataSource with `options`. */
async function statementsOf(
  Migration: (typeof MIGRATIONS)[number],
  options: { schema?: string },
): Promise<string[]> {
  const statements: string[] = [];
  const queryRunner = {
    connection: { options } as DataSource,
    query: async (sql: string) => void statements.push(sql),
  } as unknown as QueryRunner;
  const migration = new Migration();
  await migration.up(queryRunner);
  await migration.down(queryRunner);
  return statements;
}

const sha256 = (statements: string[]) =>
  createHash('sha256').update(statements.join('\0')).digest('hex');

describe('the migrations', () => {
  // The SHA-256 of each migration's statements as first released, and applied since: on a
  // DataSource without a schema they must stay byte for byte what they were, since TypeORM
  // never runs an applied migration again. A change to the schema is a new migration.
  it.each([
    [
      'CreatePlants1763769600000',
      'cfff4e41ce83fa0afd85f74bf529dfe9714e62e485619a9a996308a494dd8f51',
    ],
    [
      'CreateApiTokens1763856000000',
      'ce2944f3cd4408558949ad8424d1a08024c8b4f413077488d3171b84e28f18f7',
    ],
    [
      'NotifyApiTokenChanges1764000000000',
      '12798641edd4559bf98761ca5d2a5be64095a9c515b7442386a742186682a5a0',
    ],
    [
      'CreateCommitProbe1795392000000',
      'de1255ce63c837626420dbe4020f0a6d098c2fe0f5c1b33eff2a18709d2247a8',
    ],
  ])('%s sends the SQL it always did without a schema', async (name, hash) => {
    const Migration = MIGRATIONS.find((each) => each.name === name);
    if (Migration === undefined) throw new Error(`No migration ${name}`);
    expect(sha256(await statementsOf(Migration, {}))).toBe(hash);
  });

  it.each(MIGRATIONS.map((Migration) => [Migration.name, Migration]))(
    '%s names every table, trigger table and function in the schema, quoted',
    async (_name, Migration) => {
      const statements = await statementsOf(Migration, { schema: 'sh"op' });
      const named = statements.join('\n').match(/(?:TABLE|ON|FUNCTION) \S+/g);
      expect(named).not.toBeNull();
      for (const name of named ?? [])
        expect(name).toMatch(/^\w+ "sh""op"\."\w+"/);
    },
  );
});
