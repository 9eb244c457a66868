/** The value below which `fraction` of `values` fall (nearest rank); NaN when empty. */
export function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ??
    Number.NaN
  );
}
