import { findTokenHash, hashToken } from './token-hash.js';

describe('token hashing', () => {
  const stored = [
    'first-token-aaaaaaaa',
    'second-token-bbbbbbb',
    'third-token-cccccccc',
  ].map(hashToken);

  it('keeps a SHA-256 digest, never the token', () => {
    // FIPS 180-2 test vector for "abc".
    expect(hashToken('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hashToken('first-token-aaaaaaaa').toString('latin1')).not.toContain(
      'first-token',
    );
  });

  it('finds each stored token', () => {
    expect(findTokenHash('first-token-aaaaaaaa', stored)).toBe(0);
    expect(findTokenHash('third-token-cccccccc', stored)).toBe(2);
  });

  it.each([
    '',
    'first-token-aaaaaaa',
    'first-token-aaaaaaaab',
    'FIRST-TOKEN-AAAAAAAA',
    'first-token-aaaaaaaa ',
  ])('refuses the near miss %j', (guess) => {
    expect(findTokenHash(guess, stored)).toBe(-1);
  });

  it('refuses everything when no token is stored', () => {
    expect(findTokenHash('first-token-aaaaaaaa', [])).toBe(-1);
  });
});
