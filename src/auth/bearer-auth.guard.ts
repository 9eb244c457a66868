import { ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error.js';
import { AuthFailureLimiter } from './auth-failure.limiter.js';
import { BEARER_STRATEGY } from './bearer.strategy.js';
import { IS_PUBLIC } from './public.decorator.js';
import type { AuthenticatedClient } from './token-verifier.js';

export const REALM = 'plant-store';
const PRESENTS_BEARER_TOKEN = /^bearer\s+\S/i;

/** RFC 6750 section 3: name the error only when a token was actually presented. */
function challengeFor(request: Request): string {
  const presented = PRESENTS_BEARER_TOKEN.test(
    request.headers.authorization ?? '',
  );
  return presented
    ? `Bearer realm="${REALM}", error="invalid_token"`
    : `Bearer realm="${REALM}"`;
}

/**
 * Deny by default: every route needs a valid bearer token unless marked @Public(). Too
 * many failures from one address turn 401 into 429 until the window passes.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard(BEARER_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(
      IS_PUBLIC,
      [context.getHandler(), context.getClass()],
    );
    if (isPublic === true) return true;
    try {
      return (await super.canActivate(context)) as boolean;
    } catch (error) {
      if (
        error instanceof ApiError &&
        error.getStatus() === HttpStatus.UNAUTHORIZED
      ) {
        const request = context.switchToHttp().getRequest<Request>();
        const verdict = await this.failures.recordFailure(
          request.ip ?? 'unknown',
        );
        if (verdict.blocked)
          throw ApiError.tooManyRequests(verdict.retryAfterSeconds);
      }
      throw error;
    }
  }

  override handleRequest<TUser = AuthenticatedClient>(
    error: unknown,
    client: TUser | false,
    _info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error) throw error;
    if (!client) {
      throw ApiError.unauthorized(
        challengeFor(context.switchToHttp().getRequest<Request>()),
      );
    }
    return client;
  }
}
