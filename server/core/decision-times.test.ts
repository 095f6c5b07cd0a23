import { describe, expect, it } from "vitest";
import { barOfFine, DECISION_TIME_BUCKETS_S, FINE_BOUNDS_S, fineMiddleMs, percentileOf } from "./decision-times";

/** The fine bucket SQL's width_bucket gives `seconds`: the count of bounds at or below it. */
const fineOf = (seconds: number) => FINE_BOUNDS_S.filter((b) => b <= seconds).length;
/** The bar the histogram's own bounds give `seconds`. */
const barOf = (seconds: number) => DECISION_TIME_BUCKETS_S.filter((b) => b <= seconds).length;

describe("time-to-decide buckets", () => {
  it("every fine bucket lies inside one bar: the bars summed from fine buckets are exact", () => {
    for (const seconds of [0, 0.05, 0.1, 9.999, 10, 10.001, 29.9, 30, 59, 60, 299, 300, 899, 900, 3599, 3600, 14_399, 14_400, 86_399, 86_400, 10 ** 7, 10 ** 9]) {
      expect(barOfFine(fineOf(seconds)), `${seconds} s`).toBe(barOf(seconds));
    }
  });

  it("reads a percentile within 2.5% of the value from the fine buckets", () => {
    const values = [0.3, 2, 2.2, 7, 45, 45, 46, 600, 3000, 90_000];
    const buckets = new Map<number, number>();
    for (const v of values) buckets.set(fineOf(v), (buckets.get(fineOf(v)) ?? 0) + 1);
    const exact = (p: number) => [...values].sort((a, b) => a - b)[Math.ceil(p * values.length) - 1] as number;
    for (const p of [0.5, 0.9]) {
      const read = percentileOf(buckets, values.length, p) / 1000;
      expect(Math.abs(read - exact(p)) / exact(p)).toBeLessThan(0.025);
    }
    expect(fineMiddleMs(0)).toBeGreaterThan(0);
  });
});
