import { hashToken } from '../managed-tokens/token-hash.js';

/** The tokens given in AuthModule's options, kept as SHA-256 hashes only. */
export class ConfiguredTokens {
  constructor(readonly hashes: readonly Buffer[]) {}

  static of(tokens: readonly string[]): ConfiguredTokens {
    return new ConfiguredTokens(tokens.map(hashToken));
  }
}
