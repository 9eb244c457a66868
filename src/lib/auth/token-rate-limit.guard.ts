import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import { ApiError } from '../errors/api-error.js';
import type { AuthenticatedClient } from './token-verifier.js';

/** Per-token request limits (TOKEN_RATE_LIMIT per TOKEN_RATE_WINDOW_MS, off at 0), after the bearer guard. */
@Injectable()
export class TokenRateLimitGuard extends ThrottlerGuard {
  protected override async shouldSkip(
    context: ExecutionContext,
  ): Promise<boolean> {
    // The request as it is: switchToHttp() makes three closures per call.
    const request = context.getArgByIndex<{ user?: AuthenticatedClient }>(0);
    return (
      this.throttlers.every((throttler) => throttler.limit === 0) ||
      request.user === undefined
    );
  }

  protected override getTracker(
    request: Record<string, unknown>,
  ): Promise<string> {
    return Promise.resolve((request.user as AuthenticatedClient).name);
  }

  protected override throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw ApiError.tooManyRequests(detail.timeToBlockExpire);
  }
}
