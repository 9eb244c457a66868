import { Injectable } from '@nestjs/common';
import { ConfiguredTokens } from './configured-tokens.js';
import { findTokenHash } from './token-hash.js';
import { AuthenticatedClient, TokenVerifier } from './token-verifier.js';

/** Accepts the tokens of API_TOKENS (or the development token), compared by hash. */
@Injectable()
export class StaticTokenVerifier extends TokenVerifier {
  constructor(private readonly tokens: ConfiguredTokens) {
    super();
  }

  verify(token: string): Promise<AuthenticatedClient | undefined> {
    const index = findTokenHash(token, this.tokens.hashes);
    return Promise.resolve(
      index < 0 ? undefined : { name: `api-token-${index + 1}` },
    );
  }
}
