import { describe, expect, test } from "vitest";
import { parseCandidate, policyHref, windowDays, windowOf } from "./policy-state";

describe("the Policy page's address", () => {
  test("holds a window the page offers; another is the default", () => {
    expect(windowOf(new URLSearchParams("days=30"))).toBe("30");
    expect(windowOf(new URLSearchParams("days=12"))).toBe("14");
    expect(windowOf(new URLSearchParams(""))).toBe("14");
  });

  test("leaves the default window out", () => {
    expect(policyHref("14")).toBe("/policy");
    expect(policyHref("90")).toBe("/policy?days=90");
  });
});

describe("the candidate agents file, checked before it is sent", () => {
  test("is JSON and an object", () => {
    expect(parseCandidate('{"agents": []}')).toEqual({ ok: true, file: { agents: [] } });
    expect(parseCandidate("  ")).toEqual({ ok: false, problem: "empty" });
    expect(parseCandidate("[1]")).toEqual({ ok: false, problem: "notObject" });
    expect(parseCandidate("null")).toEqual({ ok: false, problem: "notObject" });
    const bad = parseCandidate('{"agents": [');
    expect(bad.ok).toBe(false);
    expect(bad).toMatchObject({ problem: "json" });
  });

  test("its window is a whole number of days from 1 to 365", () => {
    expect(windowDays("14")).toBe(14);
    expect(windowDays(" 365 ")).toBe(365);
    for (const text of ["0", "366", "1.5", "", "-3", "abc"]) expect(windowDays(text), text).toBeNull();
  });
});
