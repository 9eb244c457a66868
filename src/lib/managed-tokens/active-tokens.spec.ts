import { ActiveTokens, tokenKey } from './active-tokens.js';
import { hashToken } from './token-hash.js';

const row = (name: string, expiresAt: Date | null = null) => ({
  name,
  tokenHash: hashToken(`pst_${name}`),
  expiresAt,
});
const keyOf = (name: string) => tokenKey(hashToken(`pst_${name}`));

describe('ActiveTokens', () => {
  it('holds what a full load gives, and nothing it does not', () => {
    const tokens = new ActiveTokens(10);
    tokens.replaceAll([row('a'), row('b')], false);
    expect(tokens.find(keyOf('a'))).toEqual({ name: 'a', expiresAt: null });
    expect(tokens.find(keyOf('c'))).toBeUndefined();
    expect(tokens.size).toBe(2);
    expect(tokens.complete).toBe(true);

    tokens.replaceAll([row('c')], false);
    expect(tokens.find(keyOf('a'))).toBeUndefined();
    expect(tokens.find(keyOf('c'))).toEqual({ name: 'c', expiresAt: null });
    expect(tokens.size).toBe(1);
  });

  it('applies changes by name: a revoked or deleted one goes, a created one comes, a new hash replaces the old', () => {
    const tokens = new ActiveTokens(10);
    tokens.replaceAll([row('a'), row('b')], false);
    const rotated = { ...row('b'), tokenHash: hashToken('pst_b-rotated') };
    tokens.applyChanges(['a', 'b', 'c'], [rotated, row('c')]);

    expect(tokens.find(keyOf('a'))).toBeUndefined();
    expect(tokens.find(keyOf('b'))).toBeUndefined();
    expect(tokens.find(tokenKey(hashToken('pst_b-rotated')))).toEqual({
      name: 'b',
      expiresAt: null,
    });
    expect(tokens.find(keyOf('c'))).toEqual({ name: 'c', expiresAt: null });
    expect(tokens.size).toBe(2);
  });

  it('does not answer a token past its expiry', () => {
    const tokens = new ActiveTokens(10);
    tokens.replaceAll([row('a', new Date(5_000))], false);
    expect(tokens.find(keyOf('a'), 4_999)).toEqual({
      name: 'a',
      expiresAt: 5_000,
    });
    expect(tokens.find(keyOf('a'), 5_000)).toBeUndefined();
  });

  it('never holds more than its bound, and says it is incomplete past it', () => {
    const tokens = new ActiveTokens(2);
    tokens.replaceAll([row('a'), row('b')], true);
    expect(tokens.complete).toBe(false);
    expect(tokens.size).toBe(2);

    tokens.replaceAll([row('a')], false);
    expect(tokens.complete).toBe(true);
    tokens.applyChanges(['b', 'c'], [row('b'), row('c')]);
    expect(tokens.size).toBe(2);
    expect(tokens.find(keyOf('c'))).toBeUndefined();
    expect(tokens.complete).toBe(false);
  });
});

describe('ActiveTokens, by name', () => {
  it('is complete before any load', () => {
    expect(new ActiveTokens(10).complete).toBe(true);
  });

  it('forgets the names of a previous load: a change to one of them drops no other token', () => {
    const tokens = new ActiveTokens(10);
    tokens.replaceAll([row('old')], false);
    // The same secret, now under another name.
    tokens.replaceAll(
      [{ ...row('new'), tokenHash: hashToken('pst_old') }],
      false,
    );
    tokens.applyChanges(['old'], []);
    expect(tokens.find(keyOf('old'))).toEqual({ name: 'new', expiresAt: null });
  });

  it('forgets a removed name: a later change to it drops no other token', () => {
    const tokens = new ActiveTokens(10);
    tokens.replaceAll([row('a')], false);
    tokens.applyChanges(['a'], []);
    tokens.applyChanges(
      ['b'],
      [{ ...row('b'), tokenHash: hashToken('pst_a') }],
    );
    tokens.applyChanges(['a'], []);
    expect(tokens.find(keyOf('a'))).toEqual({ name: 'b', expiresAt: null });
  });
});
