import { Check, Column, Entity, PrimaryColumn, Unique } from 'typeorm';

/** A managed token: its name and the SHA-256 of its secret; constraints named as the migration did, so schema diffs are empty. */
@Entity({ name: 'api_tokens' })
@Check('api_tokens_token_hash_check', 'octet_length(token_hash) = 32')
@Unique('api_tokens_token_hash_key', ['tokenHash'])
export class ApiTokenEntity {
  @PrimaryColumn({ type: 'text' })
  name: string;

  @Column({ name: 'token_hash', type: 'bytea' })
  tokenHash: Buffer;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}

export type ApiTokenState = 'active' | 'expired' | 'revoked';

export function stateOf(
  token: ApiTokenEntity,
  now: Date = new Date(),
): ApiTokenState {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && token.expiresAt <= now) return 'expired';
  return 'active';
}
