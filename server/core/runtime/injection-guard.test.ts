import { describe, expect, test } from "vitest";
import { assertInjectionRequest, createInjectionGuard, isAssertionCurrent } from "./injection-guard";

/** An assertion whose answer the test flips; counts its calls. */
function source(initial: boolean | (() => boolean) = true) {
  const state = { current: initial, calls: 0 };
  const assertCurrent = () => {
    state.calls += 1;
    return typeof state.current === "function" ? state.current() : state.current;
  };
  return { state, assertCurrent };
}

describe("the injection guard the steering desk keeps", () => {
  test("only a literal true is current; false, another value or a throw is a revocation", () => {
    expect(isAssertionCurrent(() => true)).toBe(true);
    expect(isAssertionCurrent(() => false)).toBe(false);
    expect(isAssertionCurrent(() => 1 as unknown as boolean)).toBe(false);
    expect(
      isAssertionCurrent(() => {
        throw new Error("source closed");
      }),
    ).toBe(false);
  });

  test("each check runs the item's own assertion; a revocation latches and touches no other item", () => {
    const guard = createInjectionGuard();
    const a = source();
    const b = source();
    guard.hold("a", a.assertCurrent);
    guard.hold("b", b.assertCurrent);
    expect(guard.check("a")).toBe("current");
    a.state.current = false;
    expect(guard.split([{ id: "a" }, { id: "b" }])).toEqual({ current: [{ id: "b" }], revoked: [{ id: "a" }] });
    // Current again later: still revoked, and its assertion is not asked any more.
    a.state.current = true;
    const calls = a.state.calls;
    expect(guard.check("a")).toBe("revoked");
    expect(guard.isRevoked("a")).toBe(true);
    expect(a.state.calls).toBe(calls);
    expect(guard.check("b")).toBe("current");
    expect(b.state.calls).toBe(2);
  });

  test("an item this process does not hold is unheld; a released item is forgotten with its latch", () => {
    const guard = createInjectionGuard();
    expect(guard.check("elsewhere")).toBe("unheld");
    const a = source(() => {
      throw new Error("gone");
    });
    guard.hold("a", a.assertCurrent);
    expect(guard.check("a")).toBe("revoked");
    guard.release("a");
    expect(guard.isRevoked("a")).toBe(false);
    expect(guard.check("a")).toBe("unheld");
  });

  test("a request without an assertion or with an unknown authority kind is refused", () => {
    expect(() => assertInjectionRequest(() => true, "run")).not.toThrow();
    expect(() => assertInjectionRequest(() => true, "source-bound")).not.toThrow();
    expect(() => assertInjectionRequest(undefined, "run")).toThrow(/assertCurrent/);
    expect(() => assertInjectionRequest(() => true, "system")).toThrow(/authorityKind/);
  });
});
