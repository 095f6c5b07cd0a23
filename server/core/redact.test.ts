import { describe, expect, test } from "vitest";
import { boundAndRedact, REDACTED } from "./redact";

describe("boundAndRedact", () => {
  test("redacts secret keys and masks card numbers", () => {
    expect(boundAndRedact({ password: "x", apiKey: "k", note: "card 4111111111111111 ok", nested: { token: 1 } })).toEqual({
      password: REDACTED,
      apiKey: REDACTED,
      note: "card ************1111 ok",
      nested: { token: REDACTED },
    });
  });
  test("bounds strings, arrays, keys and depth", () => {
    const bounds = { maxDepth: 2, maxKeys: 2, maxString: 5, maxArray: 2 };
    expect(boundAndRedact("abcdefgh", bounds)).toBe("abcde… [3 more characters]");
    expect(boundAndRedact([1, 2, 3], bounds)).toEqual([1, 2, "[1 more items]"]);
    expect(boundAndRedact({ a: 1, b: 2, c: 3 }, bounds)).toEqual({ a: 1, b: 2, "…": "1 more keys" });
    expect(boundAndRedact({ a: { b: { c: 1 } } }, bounds)).toEqual({ a: { b: "[too deep]" } });
  });
  test("never invokes accessors", () => {
    let called = false;
    const hostile = Object.defineProperty({ plain: 1 }, "sneaky", { enumerable: true, get: () => { called = true; return 2; } });
    expect(boundAndRedact(hostile)).toEqual({ plain: 1 });
    expect(called).toBe(false);
  });
});
