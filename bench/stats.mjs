// Percentiles and medians, computed the same way for every figure.

/** Nearest-rank percentile of sorted values (p in [0, 100]). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1];
}

/** p50, p99, p99.9 and max of latencies in ms (a failed request counts as Infinity). */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
  };
}

/** Median of the numbers given, ignoring NaN (a missing figure); Infinity counts. */
export function median(values) {
  const finite = values
    .filter((value) => typeof value === 'number' && !Number.isNaN(value))
    .sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const middle = finite.length >> 1;
  return finite.length % 2 === 1
    ? finite[middle]
    : (finite[middle - 1] + finite[middle]) / 2;
}
