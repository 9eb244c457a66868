import { parseArgs } from 'node:util';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { stateOf } from '../auth/api-token.entity.js';
import { ApiTokensModule } from '../auth/api-tokens.module.js';
import {
  ApiTokensService,
  TokenNameTakenError,
} from '../auth/api-tokens.service.js';
import { AppConfigModule } from '../config/config.module.js';
import { validateEnvironment } from '../config/environment.js';
import { DatabaseModule } from '../database/database.module.js';
import { parseDuration } from './duration.js';

@Module({ imports: [DatabaseModule, ApiTokensModule.forDataSource()] })
class TokenCliModule {}

const USAGE = `Usage:
  npm run token -- create --name <name> [--expires-in <n>d|h|m]
  npm run token -- list
  npm run token -- revoke <name>
Works on DATABASE_URL, or on the embedded database when it is unset.`;

class UsageError extends Error {}

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
    options: { name: { type: 'string' }, 'expires-in': { type: 'string' } },
  });
  const [command, argument] = positionals;
  if (!['create', 'list', 'revoke'].includes(command ?? ''))
    throw new UsageError(USAGE);

  const environment = validateEnvironment(process.env);
  const context = await NestFactory.createApplicationContext(
    { module: TokenCliModule, imports: [AppConfigModule.forRoot(environment)] },
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
  } finally {
    await context.close();
  }
}

main().catch((error: unknown) => {
  const known =
    error instanceof UsageError || error instanceof TokenNameTakenError;
  process.stderr.write(
    `${known ? (error as Error).message : String(error instanceof Error ? error.stack : error)}\n`,
  );
  process.exit(known ? 2 : 1);
});
