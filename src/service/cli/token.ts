#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ApiTokensModule,
  ApiTokensService,
  isMissingTable,
  stateOf,
  TokenNameTakenError,
} from '../../lib/index.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { databaseConnection } from '../database/database.module.js';
import { commandName } from './command-name.js';
import { parseDuration } from './duration.js';

/** The api_tokens table of the DataSource's `schema`, without migrating: that is the application's. */
@Module({})
class TokenCliModule {
  static forSchema(schema: string | undefined): DynamicModule {
    return {
      module: TokenCliModule,
      imports: [
        databaseConnection({ migrate: false, schema }),
        ApiTokensModule.forDataSource(),
      ],
    };
  }
}

function usage(): string {
  const command = commandName(
    process.argv[1] ?? 'token.js',
    process.env.npm_lifecycle_event,
    process.cwd(),
  );
  return `Usage:
  ${command} create --name <name> [--expires-in <n>d|h|m]
  ${command} list
  ${command} revoke <name>
Works on DATABASE_URL, or on the embedded database when it is unset. With
--schema <schema>, on the tables of an application whose DataSource has that schema.`;
}

class UsageError extends Error {}

/** No api_tokens table where the CLI looked: the wrong database or schema, or not migrated. */
class MissingTableError extends Error {
  constructor(schema: string | undefined) {
    super(
      `No api_tokens table ${schema === undefined ? 'on the search_path' : `in schema "${schema}"`}: ` +
        "the application's migrations (PLANT_STORE_MIGRATIONS) make it. " +
        (schema === undefined
          ? 'If its DataSource has a schema, give it with --schema.'
          : 'Is it the schema of its DataSource?'),
    );
  }
}

const write = (text: string): void => void process.stdout.write(`${text}\n`);

async function create(
  tokens: ApiTokensService,
  name: string | undefined,
  expiresIn: string | undefined,
): Promise<void> {
  if (name === undefined || !ApiTokensService.isValidName(name)) {
    throw new UsageError(
      'create needs --name: 1 to 64 letters, digits, dots, dashes or underscores.',
    );
  }
  const lifetime =
    expiresIn === undefined ? undefined : parseDuration(expiresIn);
  if (lifetime === null)
    throw new UsageError(
      '--expires-in takes a number and a unit: 90d, 12h or 30m.',
    );
  const expiresAt =
    lifetime === undefined ? null : new Date(Date.now() + lifetime);
  const { token, record } = await tokens.create(name, expiresAt);
  write(
    `Created token "${record.name}"${expiresAt ? `, expires ${expiresAt.toISOString()}` : ', no expiry'}.`,
  );
  write('It is shown this once; only its hash is stored:');
  write(token);
}

async function list(tokens: ApiTokensService): Promise<void> {
  const rows = await tokens.list();
  if (rows.length === 0) {
    write('No managed tokens.');
    return;
  }
  const now = new Date();
  const table = rows.map((row) => [
    row.name,
    row.createdAt.toISOString(),
    row.expiresAt?.toISOString() ?? 'never',
    stateOf(row, now),
  ]);
  const header = ['NAME', 'CREATED', 'EXPIRES', 'STATE'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...table.map((row) => row[column].length)),
  );
  for (const row of [header, ...table])
    write(
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    );
}

async function revoke(
  tokens: ApiTokensService,
  name: string | undefined,
): Promise<void> {
  if (name === undefined)
    throw new UsageError('revoke needs the name of a token.');
  if (!(await tokens.revoke(name)))
    throw new UsageError(`No active token is named "${name}".`);
  write(
    `Revoked "${name}". Every running replica refuses it within a second (docs/tokens.md).`,
  );
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'expires-in': { type: 'string' },
      schema: { type: 'string' },
    },
  });
  const [command, argument] = positionals;
  if (!['create', 'list', 'revoke'].includes(command ?? ''))
    throw new UsageError(usage());

  const environment = validateEnvironment(process.env);
  const context = await NestFactory.createApplicationContext(
    {
      module: TokenCliModule,
      imports: [
        AppConfigModule.forRoot(environment),
        TokenCliModule.forSchema(values.schema),
      ],
    },
    {
      abortOnError: false,
      logger: ['fatal', 'error', 'warn'],
    },
  );
  try {
    const tokens = context.get(ApiTokensService);
    if (command === 'create')
      await create(tokens, values.name, values['expires-in']);
    if (command === 'list') await list(tokens);
    if (command === 'revoke') await revoke(tokens, argument);
  } catch (error) {
    throw isMissingTable(error) ? new MissingTableError(values.schema) : error;
  } finally {
    await context.close();
  }
}

main().catch((error: unknown) => {
  const misuse =
    error instanceof UsageError || error instanceof TokenNameTakenError;
  const known = misuse || error instanceof MissingTableError;
  process.stderr.write(
    `${known ? (error as Error).message : String(error instanceof Error ? error.stack : error)}\n`,
  );
  process.exit(misuse ? 2 : 1);
});
