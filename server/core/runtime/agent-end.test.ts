import { describe, expect, test, vi } from "vitest";
import { awaitAgentEndSideEffects, runAgentEndSideEffects } from "./agent-end";

function deferred() {
  let resolve: () => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const payload = { event: { type: "agent_end" }, ctx: { runId: "r1" } };

describe("runAgentEndSideEffects", () => {
  test("awaits anchors before releasing the lease, then starts hooks without waiting", async () => {
    const order: string[] = [];
    const anchors = deferred();
    const hook = deferred();
    const running = runAgentEndSideEffects({
      prepareTranscriptAnchors: async () => {
        order.push("anchors:start");
        await anchors.promise;
        order.push("anchors:done");
      },
      releaseTurnLease: () => void order.push("lease"),
      hooks: [
        async (p) => {
          order.push(`hook:${p.ctx.runId}`);
          await hook.promise;
          order.push("hook:done");
        },
      ],
      payload,
      onHookError: () => {},
    });
    await Promise.resolve();
    expect(order).toEqual(["anchors:start"]);
    anchors.resolve();
    const { hooksSettled } = await running;
    expect(order).toEqual(["anchors:start", "anchors:done", "lease", "hook:r1"]);
    hook.resolve();
    await hooksSettled;
    expect(order.at(-1)).toBe("hook:done");
  });

  test("hook failures are reported and never reject", async () => {
    const onHookError = vi.fn();
    const { hooksSettled } = await runAgentEndSideEffects({
      prepareTranscriptAnchors: async () => {},
      releaseTurnLease: async () => {},
      hooks: [
        () => {
          throw new Error("sync hook");
        },
        async () => {
          throw new Error("async hook");
        },
        () => "fine",
      ],
      payload,
      onHookError: (error, hook) => {
        onHookError((error as Error).message, hook.index);
        throw new Error("reporter down");
      },
    });
    await expect(hooksSettled).resolves.toBeUndefined();
    expect(onHookError.mock.calls).toEqual([
      ["sync hook", 0],
      ["async hook", 1],
    ]);
  });

  test("a failed anchor preparation still releases the lease and starts hooks; it goes to onAnchorError", async () => {
    const lease = vi.fn();
    const hook = vi.fn();
    const onAnchorError = vi.fn();
    await runAgentEndSideEffects({
      prepareTranscriptAnchors: () => Promise.reject(new Error("history unavailable")),
      releaseTurnLease: lease,
      hooks: [hook],
      payload,
      onHookError: () => {},
      onAnchorError,
    });
    expect(lease).toHaveBeenCalledTimes(1);
    expect(hook).toHaveBeenCalledWith(payload);
    expect(onAnchorError).toHaveBeenCalledWith(new Error("history unavailable"));
  });

  test("without onAnchorError the anchor failure rejects, after the lease is released", async () => {
    const lease = vi.fn();
    await expect(
      runAgentEndSideEffects({
        prepareTranscriptAnchors: () => {
          throw new Error("history unavailable");
        },
        releaseTurnLease: lease,
        hooks: [],
        payload,
        onHookError: () => {},
      }),
    ).rejects.toThrow("history unavailable");
    expect(lease).toHaveBeenCalledTimes(1);
  });

  test("a lease release failure rejects (it is the host's, not a hook's)", async () => {
    const hook = vi.fn();
    await expect(
      runAgentEndSideEffects({
        prepareTranscriptAnchors: () => {},
        releaseTurnLease: () => Promise.reject(new Error("lease lost")),
        hooks: [hook],
        payload,
        onHookError: () => {},
      }),
    ).rejects.toThrow("lease lost");
    expect(hook).toHaveBeenCalledTimes(1);
  });
});

describe("awaitAgentEndSideEffects", () => {
  test("waits for every hook and still never rejects because of one", async () => {
    const order: string[] = [];
    await awaitAgentEndSideEffects({
      prepareTranscriptAnchors: async () => void order.push("anchors"),
      releaseTurnLease: async () => void order.push("lease"),
      hooks: [
        async () => {
          await new Promise((r) => setTimeout(r, 5));
          order.push("slow hook");
        },
        async () => {
          throw new Error("bad hook");
        },
      ],
      payload,
      onHookError: () => void order.push("hook error"),
    });
    expect(order).toEqual(["anchors", "lease", "hook error", "slow hook"]);
  });
});
