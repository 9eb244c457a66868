import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ApiTokensService } from './api-tokens.service.js';
import { ConfiguredTokens } from './configured-tokens.js';

/** A service nobody can call is worth a warning at start, with the way out. */
@Injectable()
export class TokenStartupCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger('Tokens');

  constructor(
    private readonly configured: ConfiguredTokens,
    private readonly tokens: ApiTokensService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.configured.hashes.length > 0) return;
    if ((await this.tokens.countActive()) > 0) return;
    this.logger.warn(
      'No API token is active, so every request will get 401. Create one with: ' +
        'npm run token -- create --name <name> [--expires-in 90d], or set API_TOKENS.',
    );
  }
}
