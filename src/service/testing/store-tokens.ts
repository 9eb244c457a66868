import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import type { ApiTokensService } from '../../lib/managed-tokens/api-tokens.service.js';
import { tokenVerdict } from './token-verdict.js';

/** A change reaches the service within 1 s (docs/tokens.md); this is for a loaded machine. */
const SEEN_DEADLINE_MS = 10_000;
const POLL_MS = 20;

export interface StoreTokens {
  /** A new managed token, resolved once the service accepts it. */
  create(): Promise<string>;
  /** Revokes a token create() made, resolved once the service refuses it. */
  revoke(token: string): Promise<void>;
}

/** Managed tokens made and revoked by the package's ApiTokensService, as `npm run token` does. */
export class ManagedTokens implements StoreTokens {
  private service?: Promise<{ tokens: ApiTokensService; source: DataSource }>;
  private readonly names = new Map<string, string>();

  constructor(
    private readonly databaseUrl: string,
    private readonly url: string,
  ) {}

  async create(): Promise<string> {
    const { tokens } = await this.connected();
    const name = `testing-${randomBytes(6).toString('hex')}`;
    const { token } = await tokens.create(name);
    this.names.set(token, name);
    await this.until(token, true);
    return token;
  }

  async revoke(token: string): Promise<void> {
    const name = this.names.get(token);
    if (name === undefined)
      throw new Error(
        'revoke() takes a token that tokens.create() of this store made.',
      );
    const { tokens } = await this.connected();
    await tokens.revoke(name);
    await this.until(token, false);
  }

  async close(): Promise<void> {
    const opened = this.service;
    this.service = undefined;
    if (opened !== undefined) await (await opened).source.destroy();
  }

  private connected(): Promise<{
    tokens: ApiTokensService;
    source: DataSource;
  }> {
    this.service ??= (async () => {
      // Imported on first use, file by file: the front file loads optional peers a host's Jest cannot resolve.
      const [{ DataSource }, { ApiTokenEntity }, { ApiTokensService }] =
        await Promise.all([
          import('typeorm'),
          import('../../lib/managed-tokens/api-token.entity.js'),
          import('../../lib/managed-tokens/api-tokens.service.js'),
        ]);
      const source = await new DataSource({
        type: 'postgres',
        url: this.databaseUrl,
        entities: [ApiTokenEntity],
        extra: { max: 1, allowExitOnIdle: true },
      }).initialize();
      return {
        source,
        tokens: new ApiTokensService(source.getRepository(ApiTokenEntity)),
      };
    })();
    return this.service;
  }

  /** Asks the service until it agrees (token-verdict.ts). */
  private async until(token: string, wanted: boolean): Promise<void> {
    const deadline = Date.now() + SEEN_DEADLINE_MS;
    while ((await tokenVerdict(this.url, token)).accepted !== wanted) {
      if (Date.now() > deadline)
        throw new Error(
          `The service did not take the token change within ${SEEN_DEADLINE_MS / 1000} s.`,
        );
      await sleep(POLL_MS);
    }
  }
}
