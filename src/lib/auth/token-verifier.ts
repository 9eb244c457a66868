/** Who a valid token belongs to; what the guard puts on `request.user`. */
export interface AuthenticatedClient {
  /** A label for logs, never the token itself. */
  readonly name: string;
}

export interface VerifyOptions {
  /**
   * The caller's address is past its failed-authentication limit: decide from what is
   * known without cost, and treat a token that would need a look-up as not valid.
   */
  readonly suspect?: boolean;
}

/**
 * Decides whether a bearer token is valid. The guard depends on this class only, so a
 * team can give another implementation (JWT, introspection, a token table) through the
 * module's options: `AuthModule.forRoot({ tokenVerifier: MyVerifier })`.
 */
export abstract class TokenVerifier {
  /** Resolves to the client the token belongs to, or undefined when it is not valid. */
  abstract verify(
    token: string,
    options?: VerifyOptions,
  ): Promise<AuthenticatedClient | undefined>;

  /**
   * False while the verifier cannot yet judge the tokens it should know, as while starting
   * (the service's readiness then fails, so a balancer sends elsewhere). Keep it true
   * through an outage of something every replica shares: readiness failing on every
   * replica at once leaves a balancer nobody to send to. Always true unless overridden.
   */
  isReady(): boolean {
    return true;
  }

  /**
   * False while it may judge from outdated knowledge (a token store out of touch with its
   * database): the service's GET /health says so. Always true unless overridden.
   */
  isCurrent(): boolean {
    return true;
  }
}
