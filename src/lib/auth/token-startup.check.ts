import {
  type BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { ApiTokensService } from '../managed-tokens/api-tokens.service.js';
import { ConfiguredTokens } from './configured-tokens.js';

// While the database cannot answer yet (the service starts before it does), asked again.
const ASK_AGAIN_MS = 1_000;

/** A service nobody can call is worth a warning at start, with the way out. */
@Injectable()
export class TokenStartupCheck
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger('Tokens');
  private again: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly configured: ConfiguredTokens,
    private readonly tokens: ApiTokensService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.configured.hashes.length > 0) return;
    await this.check();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.again);
  }

  private async check(): Promise<void> {
    const active = await this.tokens.countActive().catch(() => undefined);
    if (active === undefined) {
      if (this.stopped) return;
      this.again = setTimeout(() => void this.check(), ASK_AGAIN_MS);
      this.again.unref();
      return;
    }
    if (active > 0) return;
    this.logger.warn(
      'No API token is active, so every request will get 401. Create one with: ' +
        'npm run token -- create --name <name> [--expires-in 90d], or set API_TOKENS.',
    );
  }
}
