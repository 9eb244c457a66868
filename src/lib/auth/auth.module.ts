import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import {
  getOptionsToken,
  getStorageToken,
  type ThrottlerModuleOptions,
  ThrottlerStorageService,
} from '@nestjs/throttler';
import { AuthFailureLimiter } from './auth-failure.limiter.js';
import { settingsProvider } from '../common/module-options.js';
import { type AuthModuleOptions, AuthSettings } from './auth-module.options.js';
import {
  AUTH_MODULE_OPTIONS,
  ConfigurableAuthModule,
} from './auth.module-definition.js';
import { BearerStrategy } from './bearer.strategy.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { TokenVerifier } from './token-verifier.js';

/**
 * Bearer tokens: header -> BearerStrategy (passport-http-bearer) -> TokenVerifier -> the
 * guard's one refusal path (401, or 429 past the failure limit); then the per-token rate
 * limit. Configured with forRoot(options?) or forRootAsync({ imports, inject, useFactory }),
 * with `tokenVerifier` and `globalGuard` beside the options (auth-module.options.ts);
 * forRoot() alone is every default (managed tokens only, plant routes guarded).
 *
 * The rate limit's storage and options are this module's own providers rather than
 * ThrottlerModule's, which is global: a host's own ThrottlerModule keeps its settings.
 */
@Module({
  imports: [PassportModule],
  providers: [
    settingsProvider(AuthSettings, AUTH_MODULE_OPTIONS),
    {
      provide: ConfiguredTokens,
      inject: [AUTH_MODULE_OPTIONS],
      useFactory: (options: AuthModuleOptions | undefined) =>
        ConfiguredTokens.of(options?.tokens ?? []),
    },
    {
      provide: getOptionsToken(),
      inject: [AuthSettings],
      useFactory: (settings: AuthSettings): ThrottlerModuleOptions => ({
        throttlers: [
          {
            name: 'per-token',
            ttl: settings.tokenRateWindowMs,
            limit: settings.tokenRateLimit,
          },
        ],
        setHeaders: false,
      }),
    },
    { provide: getStorageToken(), useClass: ThrottlerStorageService },
    BearerStrategy,
    AuthFailureLimiter,
  ],
  exports: [TokenVerifier],
})
export class AuthModule extends ConfigurableAuthModule {}
