import { describe, expect, test, vi } from "vitest";
import { SourceBoundInjectionUnsupportedError } from "./errors";
import type { TInjectionSettlement } from "./injection-guard";
import { createInjectionQueue } from "./injection-queue";
import { createV1Injection, queueGuardedInjection } from "./injection-v1";

function v1(live = true) {
  const enqueue = vi.fn(async (_text: string, _options: object) => {});
  return { enqueue, handle: createV1Injection({ isRunLive: () => live, enqueue }) };
}

describe("createV1Injection", () => {
  test("ordinary input keeps its existing behavior", async () => {
    const { handle, enqueue } = v1();
    const onQueueAccepted = () => {};
    await handle.queueMessage("hello", { onQueueAccepted });
    await handle.queueMessage("again");
    expect(enqueue.mock.calls).toEqual([
      ["hello", { onQueueAccepted }],
      ["again", {}],
    ]);
    expect(handle.version).toBe(1);
    expect(handle.isAvailable()).toBe(true);
  });

  test("a source-bound request is refused before any queue mutation or I/O", async () => {
    const { handle, enqueue } = v1();
    await expect(handle.queueMessage("steer", { authorityKind: "source-bound" })).rejects.toThrow(SourceBoundInjectionUnsupportedError);
    await expect(handle.queueMessage("steer", { assertCurrent: () => true })).rejects.toThrow(/only supports unchecked injection/);
    expect(enqueue).not.toHaveBeenCalled();
  });
});

describe("queueGuardedInjection", () => {
  test("passes the assertion and authority kind through to V2", async () => {
    const queue = createInjectionQueue({ isRunLive: () => true, dispatch: async () => {} });
    const assertCurrent = vi.fn(() => true);
    const result = await queueGuardedInjection(queue.handle, { text: "x", options: {}, assertCurrent, authorityKind: "source-bound" });
    expect(result).toEqual({ accepted: true, outcome: "committed" });
    expect(assertCurrent).toHaveBeenCalled();
  });

  test("a source-bound control on a V1-only backend fails before queue or I/O and never falls back", async () => {
    const { handle, enqueue } = v1();
    const assertCurrent = vi.fn(() => true);
    const settled: TInjectionSettlement[] = [];
    const request = { text: "steer", options: { onQueueSettled: (s: TInjectionSettlement) => void settled.push(s) }, assertCurrent, authorityKind: "source-bound" as const };
    await expect(queueGuardedInjection(handle, request)).rejects.toThrow(SourceBoundInjectionUnsupportedError);
    expect(enqueue).not.toHaveBeenCalled();
    expect(assertCurrent).not.toHaveBeenCalled();
    expect(settled).toEqual([]);
  });

  test("ordinary input through V1 is sent after the assertion passes, without V2-only options", async () => {
    const { handle, enqueue } = v1();
    const result = await queueGuardedInjection(handle, { text: "hi", options: { currentInboundContext: "ctx" }, assertCurrent: () => true, authorityKind: "run" });
    expect(result).toEqual({ accepted: true, outcome: "pending" });
    expect(enqueue).toHaveBeenCalledWith("hi", {});
  });

  test.each([
    ["a failing assertion", true, () => false],
    [
      "a throwing assertion",
      true,
      () => {
        throw new Error("x");
      },
    ],
    ["an unavailable run", false, () => true],
  ])("ordinary input through V1 with %s is refused without I/O", async (_name, live, assertCurrent) => {
    const { handle, enqueue } = v1(live);
    const settled: TInjectionSettlement[] = [];
    const accepted: boolean[] = [];
    const options = { onQueueSettled: (s: TInjectionSettlement) => void settled.push(s), onQueueAccepted: (a: boolean) => void accepted.push(a) };
    const result = await queueGuardedInjection(handle, { text: "hi", options, assertCurrent, authorityKind: "run" });
    expect(result).toEqual({ accepted: false, outcome: "rejected" });
    expect(enqueue).not.toHaveBeenCalled();
    expect(accepted).toEqual([false]);
    expect(settled).toEqual(["rejected"]);
  });

  test("without a capability the input is refused", async () => {
    await expect(queueGuardedInjection(undefined, { text: "x", options: {}, assertCurrent: () => true, authorityKind: "run" })).resolves.toEqual({
      accepted: false,
      outcome: "rejected",
    });
  });
});
