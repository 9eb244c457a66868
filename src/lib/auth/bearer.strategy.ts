import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import { AuthFailureLimiter, clientAddress } from './auth-failure.limiter.js';
import { AuthenticatedClient, TokenVerifier } from './token-verifier.js';

/**
 * Passport keeps strategies in one registry per process, by name: under passport-http-bearer's
 * own name ('bearer') this strategy would replace a host's, and the host's routes would
 * take plant tokens (issue 30). A name of its own leaves the host's strategies alone.
 */
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

  /**
   * passport-http-bearer also takes `access_token` from the query string and the body
   * (RFC 6750 sections 2.2, 2.3). Tokens in URLs end up in logs and caches, so this
   * service reads the Authorization header only.
   */
  override authenticate(request: Request, options?: object): void {
    const headersOnly = {
      headers: { authorization: request.headers.authorization },
      ip: request.ip,
    };
    super.authenticate(headersOnly as Request, options);
  }

  /**
   * An address past its failure limit gets no look-up for a token not already known (it
   * will be answered 429). False sends the request to the guard's one refusal path.
   */
  async validate(
    request: Request,
    token: string,
  ): Promise<AuthenticatedClient | false> {
    const suspect = this.failures.isOverLimit(clientAddress(request));
    return (await this.verifier.verify(token, { suspect })) ?? false;
  }
}
