import { AuthSettings } from './auth-module.options.js';
import { AuthFailureLimiter } from './auth-failure.limiter.js';

function limiter(limit: number, windowMs: number): AuthFailureLimiter {
  return new AuthFailureLimiter(
    new AuthSettings({
      authFailureLimit: limit,
      authFailureWindowMs: windowMs,
    }),
  );
}

describe('AuthFailureLimiter', () => {
  afterEach(() => vi.useRealTimers());

  it('blocks an address past its limit until its window ends', () => {
    vi.useFakeTimers();
    const failures = limiter(3, 10_000);
    const verdicts = Array.from({ length: 5 }, () =>
      failures.recordFailure('10.0.0.1'),
    );
    expect(verdicts.map((verdict) => verdict.blocked)).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    expect(verdicts[3]?.retryAfterSeconds).toBe(10);
    vi.advanceTimersByTime(4_000);
    expect(failures.recordFailure('10.0.0.1')).toEqual({
      blocked: true,
      retryAfterSeconds: 6,
    });
    vi.advanceTimersByTime(6_000);
    expect(failures.isOverLimit('10.0.0.1')).toBe(false);
    expect(failures.recordFailure('10.0.0.1').blocked).toBe(false);
  });

  it('says an address is over its limit once it has used up its failures, without counting one', () => {
    const failures = limiter(2, 60_000);
    expect(failures.isOverLimit('10.0.0.1')).toBe(false);
    failures.recordFailure('10.0.0.1');
    expect(failures.isOverLimit('10.0.0.1')).toBe(false);
    failures.recordFailure('10.0.0.1');
    expect(failures.isOverLimit('10.0.0.1')).toBe(true);
    expect(failures.isOverLimit('10.0.0.1')).toBe(true);
    expect(failures.isOverLimit('10.0.0.2')).toBe(false);
  });

  it('counts each address on its own', () => {
    const failures = limiter(1, 60_000);
    failures.recordFailure('10.0.0.1');
    expect(failures.recordFailure('10.0.0.1').blocked).toBe(true);
    expect(failures.recordFailure('10.0.0.2').blocked).toBe(false);
  });

  it('keeps a bounded number of addresses, forgetting the oldest first', () => {
    const failures = limiter(1, 60_000);
    failures.recordFailure('first');
    failures.recordFailure('first');
    expect(failures.isOverLimit('first')).toBe(true);
    for (let index = 0; index < 100_000; index += 1)
      failures.recordFailure(`rotating-${index}`);
    expect(failures.isOverLimit('first')).toBe(false);
    expect(failures.isOverLimit('rotating-99999')).toBe(true);
  });
});
