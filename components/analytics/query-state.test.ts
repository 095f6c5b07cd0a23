import { describe, expect, test } from "vitest";
import { periodEndingTonight } from "../viewer-time";
import { hrefOf, paramsOf } from "./query-state";

describe("the analytics page's address", () => {
  test("holds only what the page offers: an unknown period, outcome, day or key is left out", () => {
    const params = paramsOf(new URLSearchParams("days=12&outcome=maybe&day=yesterday&requestKey=xyz&waited=soon&agent=scripted"));
    expect(params).toEqual({ days: "30", agent: "scripted", action: "", approver: "", outcome: "", day: "", requestKey: "", waited: "" });
  });

  test("a change keeps the rest, leaves the defaults out and reads back the same", () => {
    const params = paramsOf(new URLSearchParams("days=90&agent=scripted"));
    const href = hrefOf(params, { day: "2025-03-30", outcome: "denied", requestKey: "0123456789abcdef0123456789abcdef" });
    expect(href).toBe("/analytics?days=90&agent=scripted&outcome=denied&day=2025-03-30&requestKey=0123456789abcdef0123456789abcdef");
    expect(paramsOf(new URL(href, "http://x").searchParams)).toMatchObject({ days: "90", agent: "scripted", outcome: "denied", day: "2025-03-30" });
    expect(hrefOf(params, { days: "30", agent: "" })).toBe("/analytics");
  });
});

describe("a period ending tonight", () => {
  test("ends at the next local midnight and starts that many calendar days before", () => {
    const { from, to } = periodEndingTonight(7);
    const end = new Date(to);
    expect([end.getHours(), end.getMinutes(), end.getSeconds(), end.getMilliseconds()]).toEqual([0, 0, 0, 0]);
    expect(end.getTime()).toBeGreaterThan(Date.now());
    expect(end.getTime() - Date.now()).toBeLessThanOrEqual(25 * 3_600_000);
    const start = new Date(from);
    expect(start.getHours()).toBe(0);
    expect(Math.round((end.getTime() - start.getTime()) / 86_400_000)).toBe(7);
  });

  test("is never longer than the bound it is given, whatever daylight saving does", () => {
    const { from, to } = periodEndingTonight(365, 365);
    expect(new Date(to).getTime() - new Date(from).getTime()).toBeLessThanOrEqual(365 * 86_400_000);
  });
});
