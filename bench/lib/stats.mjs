// Latency summaries and medians, computed the same way for every figure. Percentiles are
// the tests' too (test-kit/percentile.mjs): nearest rank.
import { percentiles } from '../../test-kit/percentile.mjs';

/** p50, p99, p99.9 and max of latencies in ms (a failed request counts as Infinity). */
export function summarize(values) {
  const [p50, p99, p999, max] = percentiles(values, [0.5, 0.99, 0.999, 1]);
  return { count: values.length, p50, p99, p999, max };
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
