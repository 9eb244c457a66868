import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['90d', 90 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    [' 7d\n', 7 * 86_400_000],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '0d', '10', 'd', '1.5d', '-1d', '10s', '1w', '9999999d', '1dx'])(
    'refuses %j',
    (text) => {
      expect(parseDuration(text)).toBeNull();
    },
  );
});
