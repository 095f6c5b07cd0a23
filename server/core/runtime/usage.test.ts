import { describe, expect, test } from "vitest";
import { createRunUsageAccumulator, type TOutputTokenUsageEvent } from "./usage";

function setup() {
  const published: TOutputTokenUsageEvent[] = [];
  const accumulator = createRunUsageAccumulator({ publish: (event) => void published.push(event) });
  return { accumulator, published };
}

describe("createRunUsageAccumulator", () => {
  test("adds each response to the run total and publishes once per report", () => {
    const { accumulator, published } = setup();
    const report = accumulator.capability();
    expect(report(120)).toBe(true);
    expect(report(30)).toBe(true);
    expect(published).toEqual([
      { outputTokens: 120, totalOutputTokens: 120 },
      { outputTokens: 30, totalOutputTokens: 150 },
    ]);
    expect(accumulator.totalOutputTokens()).toBe(150);
  });

  test.each([0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2, "7" as unknown as number])(
    "rejects %s without publishing",
    (count) => {
      const { accumulator, published } = setup();
      expect(accumulator.capability()(count)).toBe(false);
      expect(published).toEqual([]);
      expect(accumulator.totalOutputTokens()).toBe(0);
    },
  );

  test("a retry continues the total and supersedes the previous capability", () => {
    const { accumulator, published } = setup();
    const first = accumulator.capability();
    first(10);
    const retry = accumulator.capability();
    expect(first(99)).toBe(false);
    expect(retry(5)).toBe(true);
    expect(published.at(-1)).toEqual({ outputTokens: 5, totalOutputTokens: 15 });
  });

  test("a closed run rejects every capability, current or later", () => {
    const { accumulator, published } = setup();
    const report = accumulator.capability();
    report(1);
    accumulator.close();
    expect(report(1)).toBe(false);
    expect(accumulator.capability()(1)).toBe(false);
    expect(published).toHaveLength(1);
    expect(accumulator.isClosed()).toBe(true);
  });

  test("a failing publisher is reported; the tokens stay counted and the harness sees no throw", () => {
    const errors: unknown[] = [];
    const accumulator = createRunUsageAccumulator({
      publish: () => {
        throw new Error("bus down");
      },
      onPublishError: (error) => {
        errors.push(error);
        throw new Error("reporter down too");
      },
    });
    expect(accumulator.capability()(8)).toBe(true);
    expect(accumulator.totalOutputTokens()).toBe(8);
    expect(errors).toHaveLength(1);
  });
});
