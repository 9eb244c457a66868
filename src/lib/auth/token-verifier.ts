/** Who a valid token belongs to; what the guard puts on `request.user`. */
export interface AuthenticatedClient {
  /** A label for logs, never the token itself. */
  readonly name: string;
}

export interface VerifyOptions {
  /** The caller is past its failure limit: treat a token needing a look-up as not valid. */
  readonly suspect?: boolean;
}

/** Decides whether a bearer token is valid; replace it with `AuthModule.forRoot({ tokenVerifier })`. */
export abstract class TokenVerifier {
  /** Resolves to the client the token belongs to, or undefined when it is not valid. */
  abstract verify(
    token: string,
    options?: VerifyOptions,
  ): Promise<AuthenticatedClient | undefined>;

  /**
   * False while it cannot yet judge (starting): readiness fails. Keep it true through an
   * outage every replica shares, or a balancer has nobody to send to. Default true.
   */
  isReady(): boolean {
    return true;
  }

  /** False while it may judge from outdated knowledge (GET /health says so). Default true. */
  isCurrent(): boolean {
    return true;
  }
}
