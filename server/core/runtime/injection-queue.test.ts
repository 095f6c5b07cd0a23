import { describe, expect, test } from "vitest";
import { createInjectionQueue } from "./injection-queue";
import { callbacks, setup, source } from "./injection-queue.fixtures";

describe("createInjectionQueue (V2): admission, revocation, settlement", () => {
  test("admits, dispatches and settles an ordinary input once", async () => {
    const { queue, dispatched } = setup({ autoDrain: true });
    const cb = callbacks();
    const result = await queue.handle.queueMessage("steer left", { ...cb.options, currentInboundContext: "from #ops" }, source().assertCurrent, "run");
    expect(result).toEqual({ accepted: true, outcome: "committed" });
    expect(cb.accepted).toEqual([true]);
    expect(cb.settled).toEqual(["committed"]);
    expect(dispatched).toMatchObject([{ text: "steer left", authorityKind: "run", attempt: 1, currentInboundContext: "from #ops" }]);
    expect(queue.handle.version).toBe(2);
  });

  test("checks the assertion with the live run synchronously before mutating the queue", () => {
    const { queue, run } = setup();
    const src = source(false);
    const cb = callbacks();
    void queue.handle.queueMessage("x", cb.options, src.assertCurrent, "source-bound");
    // Everything below ran synchronously inside queueMessage: no await before the check.
    expect(src.state.calls).toBe(1);
    expect(queue.size()).toBe(0);
    expect(cb.accepted).toEqual([false]);
    expect(cb.settled).toEqual(["rejected"]);

    run.live = false;
    const other = callbacks();
    void queue.handle.queueMessage("y", other.options, source().assertCurrent, "run");
    expect(queue.size()).toBe(0);
    expect(other.settled).toEqual(["rejected"]);
  });

  test("a steering message racing a revocation is rejected, settled once, never dispatched, and stays revoked", async () => {
    const { queue, dispatched } = setup();
    const src = source();
    const cb = callbacks();
    const pending = queue.handle.queueMessage("steer", cb.options, src.assertCurrent, "source-bound");
    expect(cb.accepted).toEqual([true]);
    src.state.current = false; // revoked between queueing and dispatch
    await queue.drain();
    await expect(pending).resolves.toEqual({ accepted: true, outcome: "rejected" });
    src.state.current = true; // the source looks current again
    await queue.drain();
    const again = callbacks();
    await expect(queue.handle.queueMessage("steer again", again.options, src.assertCurrent, "source-bound")).resolves.toEqual({
      accepted: false,
      outcome: "rejected",
    });
    expect(dispatched).toEqual([]);
    expect(cb.settled).toEqual(["rejected"]);
    expect(again.settled).toEqual(["rejected"]);
  });

  test("with auto-drain, a revocation right after queueing still wins", async () => {
    const { queue, dispatched } = setup({ autoDrain: true });
    const src = source();
    const pending = queue.handle.queueMessage("steer", {}, src.assertCurrent, "source-bound");
    src.state.current = false;
    await expect(pending).resolves.toEqual({ accepted: true, outcome: "rejected" });
    expect(dispatched).toEqual([]);
  });

  test("the dispatch check and the dispatch call share one synchronous block", async () => {
    let checkedThisTick = false;
    const { queue } = setup({
      dispatch: async () => {
        expect(checkedThisTick).toBe(true);
      },
    });
    const assertCurrent = () => {
      checkedThisTick = true;
      queueMicrotask(() => {
        checkedThisTick = false;
      });
      return true;
    };
    const pending = queue.handle.queueMessage("x", {}, assertCurrent, "source-bound");
    await Promise.resolve();
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "committed" });
  });

  test("a throwing assertion is normalized to a revocation and reported", async () => {
    const { queue, dispatched, failures } = setup();
    let throwNow = false;
    const assertCurrent = () => {
      if (throwNow) throw new Error("source lookup failed");
      return true;
    };
    const cb = callbacks();
    const pending = queue.handle.queueMessage("x", cb.options, assertCurrent, "source-bound");
    throwNow = true;
    await queue.drain();
    await expect(pending).resolves.toEqual({ accepted: true, outcome: "rejected" });
    throwNow = false;
    await expect(queue.handle.queueMessage("y", {}, assertCurrent, "source-bound")).resolves.toMatchObject({ accepted: false });
    expect(dispatched).toEqual([]);
    expect(failures.map((f) => f.stage)).toEqual(["assertion"]);
    expect(cb.settled).toEqual(["rejected"]);
  });

  test("input queued while a dispatch is in flight is delivered by the same drain", async () => {
    let release: () => void = () => {};
    const texts: string[] = [];
    const { queue } = setup({
      autoDrain: true,
      dispatch: async (item) => {
        texts.push(item.text);
        if (item.text === "a") await new Promise<void>((r) => (release = r));
      },
    });
    const first = queue.handle.queueMessage("a", {}, source().assertCurrent, "run");
    await Promise.resolve();
    const second = queue.handle.queueMessage("b", {}, source().assertCurrent, "run");
    await Promise.resolve();
    expect(texts).toEqual(["a"]);
    release();
    expect((await Promise.all([first, second])).map((r) => r.outcome)).toEqual(["committed", "committed"]);
    expect(texts).toEqual(["a", "b"]);
  });

  test("waitForTranscriptCommit: false returns at admission and settles later", async () => {
    const { queue } = setup();
    const cb = callbacks();
    const result = await queue.handle.queueMessage("x", { ...cb.options, waitForTranscriptCommit: false }, source().assertCurrent, "source-bound");
    expect(result).toEqual({ accepted: true, outcome: "pending" });
    expect(cb.settled).toEqual([]);
    await queue.drain();
    expect(cb.settled).toEqual(["committed"]);
  });

  test("a run that ended cancels queued input; close cancels the rest and refuses new input", async () => {
    const { queue, run, dispatched } = setup();
    const first = callbacks();
    void queue.handle.queueMessage("a", first.options, source().assertCurrent, "run");
    run.live = false;
    await queue.drain();
    expect(first.settled).toEqual(["cancelled"]);
    run.live = true;
    const second = callbacks();
    void queue.handle.queueMessage("b", second.options, source().assertCurrent, "run");
    expect(queue.handle.isAvailable()).toBe(true);
    queue.close();
    expect(second.settled).toEqual(["cancelled"]);
    expect(queue.handle.isAvailable()).toBe(false);
    await expect(queue.handle.queueMessage("c", {}, source().assertCurrent, "run")).resolves.toEqual({ accepted: false, outcome: "rejected" });
    expect(dispatched).toEqual([]);
  });

  test("throwing callbacks and a throwing live check are reported, not propagated", async () => {
    const { queue, failures, run } = setup();
    const options = {
      onQueueAccepted: () => {
        throw new Error("accepted cb");
      },
      onQueueSettled: () => {
        throw new Error("settled cb");
      },
    };
    const pending = queue.handle.queueMessage("x", options, source().assertCurrent, "run");
    await queue.drain();
    await expect(pending).resolves.toMatchObject({ outcome: "committed" });
    Object.defineProperty(run, "live", {
      get() {
        throw new Error("backend gone");
      },
    });
    expect(queue.handle.isAvailable()).toBe(false);
    expect(failures.map((f) => f.stage)).toEqual(["callback", "callback", "live-check"]);
  });

  test("refuses a request without an assertion or with an unknown authority kind, before any mutation", async () => {
    const { queue } = setup();
    await expect(queue.handle.queueMessage("x", {}, undefined as never, "run")).rejects.toThrow(TypeError);
    await expect(queue.handle.queueMessage("x", {}, () => true, "sender" as never)).rejects.toThrow(/authorityKind/);
    expect(queue.size()).toBe(0);
  });

  test("requires exactly one dispatch port", () => {
    expect(() => createInjectionQueue({ isRunLive: () => true })).toThrow(TypeError);
    expect(() => createInjectionQueue({ isRunLive: () => true, dispatch: async () => {}, dispatchBatch: async () => {} })).toThrow(TypeError);
  });

  test("offers pending-input methods only with a port", () => {
    const { queue } = setup();
    expect(queue.handle.claimPendingUserInputAnswer).toBeUndefined();
    expect(queue.handle.cancelPendingUserInput).toBeUndefined();
  });
});
