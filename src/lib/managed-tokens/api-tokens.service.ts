import { randomBytes } from 'node:crypto';
import { IsNull, Repository } from 'typeorm';
import { ACTIVE_TOKEN } from './active-token-rows.js';
import { ApiTokenEntity } from './api-token.entity.js';
import { hashToken } from './token-hash.js';

/** The prefix lets secret scanners recognise a leaked Plant Store token. */
export const MANAGED_TOKEN_PREFIX = 'pst_';
const TOKEN_NAME = /^[\w.-]{1,64}$/;

export class TokenNameTakenError extends Error {}

export interface CreatedToken {
  token: string;
  record: ApiTokenEntity;
}

/** Managed tokens, created, listed and revoked by operators (npm run token). */
export class ApiTokensService {
  constructor(private readonly tokens: Repository<ApiTokenEntity>) {}

  static isValidName(name: string): boolean {
    return TOKEN_NAME.test(name);
  }

  async create(
    name: string,
    expiresAt: Date | null = null,
  ): Promise<CreatedToken> {
    const token = `${MANAGED_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const tokenHash = hashToken(token);
    const inserted = await this.tokens
      .createQueryBuilder()
      .insert()
      .values({ name, tokenHash, expiresAt })
      .orIgnore()
      .returning(['created_at'])
      .execute();
    const [row] = inserted.raw as { created_at: Date }[];
    if (row === undefined)
      throw new TokenNameTakenError(`A token named ${name} exists already.`);
    const record = this.tokens.create({
      name,
      tokenHash,
      createdAt: row.created_at,
      expiresAt,
      revokedAt: null,
    });
    return { token, record };
  }

  list(): Promise<ApiTokenEntity[]> {
    return this.tokens.find({ order: { createdAt: 'ASC' } });
  }

  /** True when a token of that name was active and is now revoked. */
  async revoke(name: string): Promise<boolean> {
    const result = await this.tokens.update(
      { name, revokedAt: IsNull() },
      { revokedAt: new Date() },
    );
    return (result.affected ?? 0) > 0;
  }

  /** The active token with this hash, if any. */
  async findActive(tokenHash: Buffer): Promise<ApiTokenEntity | undefined> {
    const token = await this.tokens
      .createQueryBuilder()
      .where('token_hash = :tokenHash', { tokenHash })
      .andWhere(ACTIVE_TOKEN)
      .getOne();
    return token ?? undefined;
  }

  // async: before the DataSource is initialized createQueryBuilder throws, and a caller's
  // catch must see it.
  async countActive(): Promise<number> {
    return this.tokens.createQueryBuilder().where(ACTIVE_TOKEN).getCount();
  }
}
