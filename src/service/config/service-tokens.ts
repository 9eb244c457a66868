import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { readOrCreateSecretFile } from './secret-file.js';
import { Environment } from './environment.js';

const DEVELOPMENT_TOKEN_FILE = 'dev-token';

/** The tokens the service hands to AuthModule, from its settings. */
export class ServiceTokens {
  constructor(
    readonly accepted: readonly string[],
    /** Set only for the development token made for the embedded database. */
    readonly developmentToken?: string,
  ) {}
}

/**
 * API_TOKENS when given. Otherwise, on the embedded database (a developer's machine), a
 * token made once and kept in DATA_DIR. On an external database, none: tokens then come
 * from the api_tokens table (npm run token).
 */
export async function loadServiceTokens(
  env: Environment,
): Promise<ServiceTokens> {
  if (env.API_TOKENS.length > 0) return new ServiceTokens(env.API_TOKENS);
  if (env.DATABASE_URL !== undefined) return new ServiceTokens([]);
  const token = await readOrCreateSecretFile(
    join(env.DATA_DIR, DEVELOPMENT_TOKEN_FILE),
    { bytes: 32, prefix: 'dev_' },
  );
  return new ServiceTokens([token], token);
}

/** Provides ServiceTokens: AuthModule's options factory and bootstrap.ts's banner read it. */
@Module({
  providers: [
    {
      provide: ServiceTokens,
      inject: [Environment],
      useFactory: loadServiceTokens,
    },
  ],
  exports: [ServiceTokens],
})
export class ServiceTokensModule {}
