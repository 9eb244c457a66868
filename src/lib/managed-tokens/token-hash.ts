import { hash, timingSafeEqual } from 'node:crypto';

/** A token's SHA-256, as stored, by Node's one-shot `hash` (docs/performance.md#small-costs-paid-per-request). */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** The index of the stored hash equal to `candidate`, or -1, comparing all in constant time. */
export function indexOfTokenHash(
  candidate: Buffer,
  hashes: readonly Buffer[],
): number {
  let found = -1;
  hashes.forEach((hash, index) => {
    if (timingSafeEqual(candidate, hash)) found = index;
  });
  return found;
}

/** indexOfTokenHash for a token not yet hashed. */
export function findTokenHash(
  token: string,
  hashes: readonly Buffer[],
): number {
  return indexOfTokenHash(hashToken(token), hashes);
}
