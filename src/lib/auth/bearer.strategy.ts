import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { AuthFailureLimiter, clientAddress } from './auth-failure.limiter.js';
import { AuthenticatedClient, TokenVerifier } from './token-verifier.js';

/** A name of its own: under 'bearer' it would replace a host's strategy in passport's registry (issue 30). */
export const BEARER_STRATEGY = 'plant-store-bearer';

/** RFC 6750 bearer tokens, checked by whichever TokenVerifier the app binds. */
@Injectable()
export class BearerStrategy extends PassportStrategy(
  Strategy,
  BEARER_STRATEGY,
) {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly failures: AuthFailureLimiter,
  ) {
    super({ passReqToCallback: true });
  }

  /** The Authorization header only: tokens in query strings or bodies end up in logs. */
  override authenticate(request: Request, options?: object): void {
    const headersOnly = {
      headers: { authorization: request.headers.authorization },
      ip: request.ip,
    };
    super.authenticate(headersOnly as Request, options);
  }

  /** A suspect address gets no look-up for an unknown token; false goes to the guard's refusal. */
  async validate(
    request: Request,
    token: string,
  ): Promise<AuthenticatedClient | false> {
    const suspect = this.failures.isOverLimit(clientAddress(request));
    return (await this.verifier.verify(token, { suspect })) ?? false;
  }
}
