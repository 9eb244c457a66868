import { hash, timingSafeEqual } from 'node:crypto';

/**
 * A token's SHA-256, as stored. Node's one-shot `hash` (a string is hashed as UTF-8) makes
 * no Hash object: 0.6 us against createHash's 1.0 us, once per request (bench/RESULTS.md).
 */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
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
