import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { readOrCreateSecretFile } from './secret-file.js';
import { Environment } from './environment.js';

const DEVELOPMENT_TOKEN_FILE = 'dev-token';

/** The tokens the service hands to AuthModule, from its settings. */
export class ServiceApiTokens {
  constructor(
    readonly accepted: readonly string[],
    /** Set only for the development token made for the embedded database. */
    readonly developmentToken?: string,
  ) {}
}

/** API_TOKENS; else on the embedded database a token kept in DATA_DIR; else none (the api_tokens table). */
export async function loadServiceApiTokens(
  env: Environment,
): Promise<ServiceApiTokens> {
  if (env.API_TOKENS.length > 0) return new ServiceApiTokens(env.API_TOKENS);
  if (env.DATABASE_URL !== undefined) return new ServiceApiTokens([]);
  const token = await readOrCreateSecretFile(
    join(env.DATA_DIR, DEVELOPMENT_TOKEN_FILE),
    { bytes: 32, prefix: 'dev_' },
  );
  return new ServiceApiTokens([token], token);
}

/** Provides ServiceApiTokens: AuthModule's options factory and bootstrap.ts's banner read it. */
@Module({
  providers: [
    {
      provide: ServiceApiTokens,
      inject: [Environment],
      useFactory: loadServiceApiTokens,
    },
  ],
  exports: [ServiceApiTokens],
})
export class ServiceApiTokensModule {}
