import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('forgets an entry after its TTL', () => {
    let now = 0;
    const cache = new TtlCache<string>(100, 10, () => now);
    cache.set('a', 'first');
    now = 99;
    expect(cache.get('a')).toEqual({ value: 'first' });
    now = 100;
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps null as a value, distinct from a miss', () => {
    const cache = new TtlCache<string | null>(100, 10);
    cache.set('unknown', null);
    expect(cache.get('unknown')).toEqual({ value: null });
    expect(cache.get('other')).toBeUndefined();
  });

  it('holds at most maxEntries, pushing out the oldest', () => {
    const cache = new TtlCache<number>(1000, 3);
    for (let index = 0; index < 10; index += 1) cache.set(`k${index}`, index);
    expect(cache.size).toBe(3);
    expect(cache.get('k6')).toBeUndefined();
    expect(cache.get('k9')).toEqual({ value: 9 });
  });

  it('stores nothing with a TTL of 0', () => {
    const cache = new TtlCache<number>(0, 3);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});
