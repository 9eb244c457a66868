import { AUTH_DEFAULTS, AuthSettings } from './auth-module.options.js';

describe('AuthSettings', () => {
  it('fills every option left out with its default', () => {
    const { tokens: _tokens, ...limits } = AUTH_DEFAULTS;
    expect(new AuthSettings()).toEqual(limits);
    expect(new AuthSettings({ tokenRateLimit: 10 }).tokenRateLimit).toBe(10);
  });

  it('refuses a token too short to be secret, without naming it', () => {
    const attempt = () => new AuthSettings({ tokens: ['short-secret'] });
    expect(attempt).toThrow(/tokens\[0\] must be at least 16/);
    expect(attempt).not.toThrow(/short-secret/);
  });

  it('refuses a limit that is not a whole number in range', () => {
    expect(() => new AuthSettings({ tokenLookupConcurrency: 0 })).toThrow(
      /tokenLookupConcurrency must be an integer of at least 1/,
    );
  });

  it('reads tokenResyncIntervalMs, the earlier name, as tokenReloadIntervalMs where that is unset', () => {
    expect(
      new AuthSettings({ tokenResyncIntervalMs: 5_000 }).tokenReloadIntervalMs,
    ).toBe(5_000);
    const both = new AuthSettings({
      tokenResyncIntervalMs: 5_000,
      tokenReloadIntervalMs: 7_000,
    });
    expect(both.tokenReloadIntervalMs).toBe(7_000);
    expect(both).not.toHaveProperty('tokenResyncIntervalMs');
    expect(() => new AuthSettings({ tokenResyncIntervalMs: 10 })).toThrow(
      /tokenReloadIntervalMs must be an integer of at least 1000/,
    );
  });
});
