/**
 * Time to decide, in buckets (docs/analytics.md): the histogram's bars, and the fine buckets the
 * percentiles are read from. Pure: the analytics repository counts decisions per fine bucket in
 * SQL (`width_bucket` over {@link FINE_BOUNDS_S}) and these turn the counts into figures.
 */

/** The histogram's upper bounds in seconds (the last bucket has none). */
export const DECISION_TIME_BUCKETS_S = [10, 30, 60, 300, 900, 3600, 14_400, 86_400] as const;

/**
 * The fine buckets percentiles and the histogram are read from: bounds 5% apart from 0.1 s to over
 * a year, with the histogram's bounds among them (so each fine bucket lies inside one bar and the
 * bars are exact sums). A p50 or p90 is the middle of its fine bucket, within 2.5% of the exact
 * value: an exact percentile sorts every decision of the period for each approver, agent and
 * action, where these are counted in one hashed pass.
 */
const FINE_RATIO = 1.05;
export const FINE_BOUNDS_S: readonly number[] = [...new Set([...Array.from({ length: 410 }, (_, i) => Math.round(0.1 * FINE_RATIO ** i * 1e4) / 1e4), ...DECISION_TIME_BUCKETS_S])].sort((a, b) => a - b);

/** The value a percentile reads in fine bucket `i` (between its bounds, geometrically), in milliseconds. */
export function fineMiddleMs(i: number): number {
  const upper = FINE_BOUNDS_S[i] ?? (FINE_BOUNDS_S[FINE_BOUNDS_S.length - 1] as number) * FINE_RATIO;
  const lower = i === 0 ? 0 : (FINE_BOUNDS_S[i - 1] as number);
  return (i === 0 ? upper / 2 : Math.sqrt(lower * upper)) * 1000;
}

/** The histogram bar (index into {@link DECISION_TIME_BUCKETS_S}, one more for the rest) of fine bucket `i`: the bar holding its lower bound. */
export function barOfFine(i: number): number {
  const lower = i === 0 ? 0 : (FINE_BOUNDS_S[i - 1] as number);
  const bar = DECISION_TIME_BUCKETS_S.findIndex((upTo) => lower < upTo);
  return bar === -1 ? DECISION_TIME_BUCKETS_S.length : bar;
}

/** The nearest-rank percentile `p` of counts per fine bucket. */
export function percentileOf(buckets: ReadonlyMap<number, number>, total: number, p: number): number {
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [bucket, n] of [...buckets.entries()].sort(([a], [b]) => a - b)) {
    seen += n;
    if (seen >= rank) return Math.round(fineMiddleMs(bucket));
  }
  return 0;
}

