// Percentiles: one definition for the benchmark and the tests, so that "p99" means one thing.
// Plain JavaScript so the .mjs benchmark can import it too; its types are in percentile.d.mts.

/** Nearest rank of a sorted array; see percentile(). */
function nearestRank(sorted, fraction) {
  if (sorted.length === 0) return Number.NaN;
  // Less a hair, so that a product that floating point puts just above a whole number
  // (0.07 * 100 is 7.000000000000001) keeps its rank (7, not 8).
  const rank = Math.ceil(fraction * sorted.length - 1e-9);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1];
}

/**
 * Nearest rank: the smallest value such that at least `fraction` of the values are at or
 * below it, sorted[ceil(fraction * n) - 1] clamped to the first and last; NaN when empty.
 */
export function percentile(values, fraction) {
  return nearestRank(Float64Array.from(values).sort(), fraction);
}

/** percentile() at each of `fractions`, sorting the values once. */
export function percentiles(values, fractions) {
  const sorted = Float64Array.from(values).sort();
  return fractions.map((fraction) => nearestRank(sorted, fraction));
}
