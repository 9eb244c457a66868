/**
 * Nearest rank: the smallest value such that at least `fraction` (0 to 1: 0.99 for p99) of
 * the values are at or below it, sorted[ceil(fraction * n) - 1] clamped; NaN when empty.
 */
export function percentile(
  values: Iterable<number> | ArrayLike<number>,
  fraction: number,
): number;

/** percentile() at each of `fractions`, sorting the values once. */
export function percentiles(
  values: Iterable<number> | ArrayLike<number>,
  fractions: readonly number[],
): number[];
