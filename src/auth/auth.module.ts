import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { type Environment, environmentConfig } from '../config/environment.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { ConfiguredTokens, loadConfiguredTokens } from './configured-tokens.js';
import { StaticTokenVerifier } from './static-token.verifier.js';
import { TokenVerifier } from './token-verifier.js';

@Module({
  imports: [PassportModule],
  providers: [
    {
      provide: ConfiguredTokens,
      inject: [environmentConfig.KEY],
      useFactory: (env: Environment) => loadConfiguredTokens(env),
    },
    { provide: TokenVerifier, useClass: StaticTokenVerifier },
    BearerStrategy,
    { provide: APP_GUARD, useClass: BearerAuthGuard },
  ],
  exports: [ConfiguredTokens, TokenVerifier],
})
export class AuthModule {}
