import {
  ConfigurableModuleBuilder,
  Module,
  type Provider,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import {
  getOptionsToken,
  getStorageToken,
  type ThrottlerModuleOptions,
  ThrottlerStorageService,
} from '@nestjs/throttler';
import {
  buildConfigurableModule,
  settingsProvider,
} from '../dynamic-modules/module-options.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { ApiTokensModule } from '../managed-tokens/api-tokens.module.js';
import { activeTokenStoreProviders } from './active-token-store.providers.js';
import { ApiTokenVerifier } from './api-token.verifier.js';
import { AuthFailureLimiter } from './auth-failure.limiter.js';
import {
  AuthGuardScope,
  type AuthModuleExtras,
  type AuthModuleOptions,
  AuthSettings,
} from './auth-module.options.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { ConfiguredTokens } from './configured-tokens.js';
import { TokenRateLimitGuard } from './token-rate-limit.guard.js';
import { TokenStartupCheck } from './token-startup.check.js';
import { TokenVerifier } from './token-verifier.js';

/** The providers that depend on the extras: the verifier, and the guards' scope. */
function providersFor({
  tokenVerifier,
  globalGuard = false,
  dataSource,
}: AuthModuleExtras): Provider[] {
  const own = tokenVerifier === undefined;
  return [
    { provide: TokenVerifier, useClass: tokenVerifier ?? ApiTokenVerifier },
    { provide: AuthGuardScope, useValue: new AuthGuardScope(globalGuard) },
    // Who is calling, then how often; the bearer guard lets through what its scope leaves open.
    { provide: APP_GUARD, useClass: BearerAuthGuard },
    { provide: APP_GUARD, useClass: TokenRateLimitGuard },
    // The api_tokens table and its store are the default verifier's: a host's own needs neither.
    ...(own
      ? [TokenStartupCheck, ...activeTokenStoreProviders(dataSource)]
      : []),
  ];
}

export const {
  ConfigurableModuleClass: ConfigurableAuthModule,
  MODULE_OPTIONS_TOKEN: AUTH_MODULE_OPTIONS,
} = buildConfigurableModule(
  new ConfigurableModuleBuilder<AuthModuleOptions>({
    moduleName: 'Auth',
  }).setExtras<AuthModuleExtras>(
    { tokenVerifier: undefined, globalGuard: false, dataSource: undefined },
    (definition, extras) => ({
      ...definition,
      imports: [
        ...(definition.imports ?? []),
        ...(extras.tokenVerifier === undefined
          ? [ApiTokensModule.forDataSource(extras.dataSource), MetricsModule]
          : []),
      ],
      providers: [...(definition.providers ?? []), ...providersFor(extras)],
    }),
  ),
);

/**
 * Bearer tokens (401, or 429 past the failure limit), then the per-token rate limit, on providers of
 * its own so a host's ThrottlerModule keeps its settings. forRoot(options?) or forRootAsync(...).
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
