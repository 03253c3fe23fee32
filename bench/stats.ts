// Summaries of repeated measurements: a median with its spread, and the ratio
// of two medians. Benchmarks here report medians because a noisy 2-core
// machine produces outliers in both directions; min/max and the quartiles show
// how far the runs were apart.

export interface Summary {
  median: number;
  min: number;
  max: number;
  /** First and third quartile (linear interpolation). */
  q1: number;
  q3: number;
  runs: number;
}

/** The p-quantile (0..1) of sorted values, linearly interpolated. */
export function quantileSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * p;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  const a = sorted[lo] ?? Number.NaN;
  const b = sorted[hi] ?? Number.NaN;
  return a + (b - a) * (at - lo);
}

export function quantile(values: readonly number[], p: number): number {
  return quantileSorted([...values].sort((x, y) => x - y), p);
}

export function summarize(values: readonly number[]): Summary {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((x, y) => x - y);
  return {
    median: quantileSorted(sorted, 0.5),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    q1: quantileSorted(sorted, 0.25),
    q3: quantileSorted(sorted, 0.75),
    runs: sorted.length,
  };
}

/** `a / b` of two medians; NaN when either is missing. */
export function ratio(a: Summary | undefined, b: Summary | undefined): number {
  if (a === undefined || b === undefined || !(b.median !== 0)) return Number.NaN;
  return a.median / b.median;
}
