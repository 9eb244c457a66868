import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ThrottlerModule } from '@nestjs/throttler';
import { Environment } from '../config/environment.js';
import { ActiveTokensModule } from './active-tokens.module.js';
import { ApiTokenVerifier } from './api-token.verifier.js';
import { ApiTokensModule } from './api-tokens.module.js';
import { AuthFailureLimiter } from './auth-failure.limiter.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { ConfiguredTokens, loadConfiguredTokens } from './configured-tokens.js';
import { TokenRateLimitGuard } from './token-rate-limit.guard.js';
import { TokenStartupCheck } from './token-startup.check.js';
import { TokenVerifier } from './token-verifier.js';

@Module({
  imports: [
    PassportModule,
    ApiTokensModule,
    ActiveTokensModule,
    ThrottlerModule.forRootAsync({
      inject: [Environment],
      useFactory: (env: Environment) => ({
        throttlers: [
          {
            name: 'per-token',
            ttl: env.TOKEN_RATE_WINDOW_MS,
            limit: env.TOKEN_RATE_LIMIT,
          },
        ],
        setHeaders: false,
      }),
    }),
  ],
  providers: [
    {
      provide: ConfiguredTokens,
      inject: [Environment],
      useFactory: (env: Environment) => loadConfiguredTokens(env),
    },
    { provide: TokenVerifier, useClass: ApiTokenVerifier },
    BearerStrategy,
    AuthFailureLimiter,
    TokenStartupCheck,
    // Guards run in this order: who is calling, then how often.
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_GUARD, useClass: TokenRateLimitGuard },
  ],
  exports: [ConfiguredTokens, TokenVerifier],
})
export class AuthModule {}
