import { describe, expect, test, vi } from "vitest";
import { InjectionRevokedError } from "./errors";
import type { TInjectionItem } from "./injection-guard";
import { callbacks, setup, source } from "./injection-queue.fixtures";

describe("createInjectionQueue (V2): batches and retries", () => {
  test("a batch omits its revoked item without cancelling accepted work or poisoning later controls", async () => {
    const batches: string[][] = [];
    const { queue } = setup({ dispatch: undefined, dispatchBatch: async (items) => void batches.push(items.map((i) => i.text)) });
    const [a, b, c] = [source(), source(), source()];
    const [ca, cb, cc] = [callbacks(), callbacks(), callbacks()];
    const results = [
      queue.handle.queueMessage("a", ca.options, a.assertCurrent, "run"),
      queue.handle.queueMessage("b", cb.options, b.assertCurrent, "source-bound"),
      queue.handle.queueMessage("c", cc.options, c.assertCurrent, "source-bound"),
    ];
    b.state.current = false;
    await queue.drain();
    expect(batches).toEqual([["a", "c"]]);
    expect((await Promise.all(results)).map((r) => r.outcome)).toEqual(["committed", "rejected", "committed"]);
    expect([ca.settled, cb.settled, cc.settled]).toEqual([["committed"], ["rejected"], ["committed"]]);
    // Every item was checked right before the batch dispatch, not only at admission.
    expect([a.state.calls, b.state.calls, c.state.calls]).toEqual([2, 2, 2]);
    const later = queue.handle.queueMessage("d", {}, source().assertCurrent, "source-bound");
    await queue.drain();
    await expect(later).resolves.toMatchObject({ outcome: "committed" });
    expect(batches.at(-1)).toEqual(["d"]);
  });

  test("retries settle exactly once and re-check the assertion before each retry", async () => {
    let failuresLeft = 2;
    const dispatch = vi.fn(async (_item: TInjectionItem) => {
      if (failuresLeft-- > 0) throw new Error("provider busy");
    });
    const { queue, failures } = setup({ dispatch, maxDispatchAttempts: 3 });
    const src = source();
    const cb = callbacks();
    const pending = queue.handle.queueMessage("x", cb.options, src.assertCurrent, "source-bound");
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "committed" });
    expect(dispatch.mock.calls.map(([item]) => item.attempt)).toEqual([1, 2, 3]);
    expect(src.state.calls).toBe(4); // admission + one before each of the three dispatches
    expect(cb.settled).toEqual(["committed"]);
    expect(failures.map((f) => f.stage)).toEqual(["dispatch", "dispatch"]);
  });

  test("exhausted retries reject once", async () => {
    const dispatch = vi.fn(async () => {
      throw new Error("provider down");
    });
    const { queue } = setup({ dispatch, maxDispatchAttempts: 2 });
    const cb = callbacks();
    const pending = queue.handle.queueMessage("x", cb.options, source().assertCurrent, "run");
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "rejected" });
    expect(dispatch).toHaveBeenCalledTimes(2);
    expect(cb.settled).toEqual(["rejected"]);
  });

  test("a revocation between retries stops the retry", async () => {
    const src = source();
    const dispatch = vi.fn(async () => {
      src.state.current = false;
      throw new Error("transient");
    });
    const { queue } = setup({ dispatch, maxDispatchAttempts: 5 });
    const cb = callbacks();
    const pending = queue.handle.queueMessage("x", cb.options, src.assertCurrent, "source-bound");
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "rejected" });
    expect(dispatch).toHaveBeenCalledTimes(1);
    expect(cb.settled).toEqual(["rejected"]);
  });

  test("a non-retryable error is terminal", async () => {
    const dispatch = vi.fn(async () => {
      throw new Error("bad request");
    });
    const { queue } = setup({ dispatch, maxDispatchAttempts: 5, isRetryable: () => false });
    const pending = queue.handle.queueMessage("x", {}, source().assertCurrent, "run");
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "rejected" });
    expect(dispatch).toHaveBeenCalledTimes(1);
  });

  test("a revocation detected inside a batch dispatch retries the others without spending their attempt", async () => {
    const [a, b] = [source(), source()];
    const calls: string[][] = [];
    const dispatchBatch = async (items: readonly TInjectionItem[]) => {
      calls.push(items.map((i) => i.text));
      b.state.current = false; // revoked while the SDK prepared the write
      if (!items.every((item) => item.assertCurrent())) throw new InjectionRevokedError();
    };
    const { queue } = setup({ dispatch: undefined, dispatchBatch, maxDispatchAttempts: 1 });
    const results = [queue.handle.queueMessage("a", {}, a.assertCurrent, "run"), queue.handle.queueMessage("b", {}, b.assertCurrent, "source-bound")];
    await queue.drain();
    expect(calls).toEqual([["a", "b"], ["a"]]);
    expect((await Promise.all(results)).map((r) => r.outcome)).toEqual(["committed", "rejected"]);
  });

  test("refuses a retry budget that is not a whole number of at least 1", () => {
    expect(() => setup({ maxDispatchAttempts: Number.NaN })).toThrow(RangeError);
    expect(() => setup({ maxDispatchAttempts: 0 })).toThrow(RangeError);
  });
});
