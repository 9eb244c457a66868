import { createHash, timingSafeEqual } from 'node:crypto';

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The index of the stored hash equal to `candidate` (a token's hash), or -1. Every stored
 * hash is compared in constant time and none is skipped, so the time taken says nothing
 * about which tokens exist or how close a guess came.
 */
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
