import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors/api-error.js';
import { AuthFailureLimiter, clientAddress } from './auth-failure.limiter.js';
import { AuthGuardScope } from './auth-module.options.js';
import { BEARER_STRATEGY } from './bearer.strategy.js';
import { IS_PUBLIC } from './public.decorator.js';
import { REQUIRES_TOKEN } from './requires-token.decorator.js';
import type { AuthenticatedClient } from './token-verifier.js';

export const REALM = 'plant-store';
const PRESENTS_BEARER_TOKEN = /^bearer\s+\S/i;

/** What the guard reads of a request, on Express or Fastify alike. */
type AuthenticatedRequest = Pick<IncomingMessage, 'headers'> & { ip?: string };

/** RFC 6750 section 3: name the error only when a token was actually presented. */
function challengeFor(request: AuthenticatedRequest): string {
  const presented = PRESENTS_BEARER_TOKEN.test(
    request.headers.authorization ?? '',
  );
  return presented
    ? `Bearer realm="${REALM}", error="invalid_token"`
    : `Bearer realm="${REALM}"`;
}

/** Global: every route but @Public() ones; otherwise @RequiresToken() ones. One refusal path: 401, or 429. */
@Injectable()
export class BearerAuthGuard extends AuthGuard(BEARER_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
    private readonly scope: AuthGuardScope,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext): Promise<boolean> | true {
    return this.isOpen(context)
      ? true
      : (super.canActivate(context) as Promise<boolean>);
  }

  private isOpen(context: ExecutionContext): boolean {
    const targets = [context.getHandler(), context.getClass()];
    const marked = (key: string): boolean =>
      this.reflector.getAllAndOverride<boolean | undefined>(key, targets) ===
      true;
    return marked(IS_PUBLIC) || (!this.scope.global && !marked(REQUIRES_TOKEN));
  }

  override handleRequest<TUser = AuthenticatedClient>(
    error: unknown,
    client: TUser | false,
    _info: unknown,
    context: ExecutionContext,
  ): TUser {
    // The verifier could not decide (the database is down): not the client's failure.
    if (error) throw error;
    if (client) return client;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const verdict = this.failures.recordFailure(clientAddress(request));
    if (verdict.blocked)
      throw ApiError.tooManyRequests(verdict.retryAfterSeconds);
    throw ApiError.unauthorized(challengeFor(request));
  }
}
